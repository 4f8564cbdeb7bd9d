import type { DataSourceOptions } from 'typeorm';
import { migrations } from '../../migrations/index.js';

/**
 * One definition of the connection, shared by the service, the CLI and the test harness. It names
 * no entity: in the service each feature module registers its own (`TypeOrmModule.forFeature`,
 * with `autoLoadEntities`), and the CLI passes the few its commands use (`cli/cli-entities.ts`).
 * Migrations need none.
 */
export function dataSourceOptions(url: string, extra: Partial<DataSourceOptions> = {}): DataSourceOptions {
  return {
    type: 'postgres',
    url,
    migrations,
    migrationsTableName: 'schema_migrations',
    migrationsTransactionMode: 'each',
    synchronize: false,
    extra: { max: 20, connectionTimeoutMillis: 5_000 },
    ...extra,
  } as DataSourceOptions;
}
