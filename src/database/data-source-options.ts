import type { DataSourceOptions } from 'typeorm';
import { migrations } from '../../migrations/index.js';
import { entities } from './entities.js';

/** One definition of the connection, shared by the service, the CLI and the test harness. */
export function dataSourceOptions(url: string, extra: Partial<DataSourceOptions> = {}): DataSourceOptions {
  return {
    type: 'postgres',
    url,
    migrations,
    entities,
    migrationsTableName: 'schema_migrations',
    migrationsTransactionMode: 'each',
    synchronize: false,
    extra: { max: 20, connectionTimeoutMillis: 5_000 },
    ...extra,
  } as DataSourceOptions;
}
