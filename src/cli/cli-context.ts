import type { INestApplicationContext } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { ConfigError, loadConfig, type AppConfig } from '../config/app-config.js';
import { loadEnvFile } from '../config/env-file.js';
import { createLogger } from '../common/logging/logger.js';
import { dataSourceOptions } from '../database/data-source-options.js';
import { provisionDatabase } from '../database/database-runtime.js';
import { runMigrations } from '../database/migrate.js';
import { cliEntities } from './cli-entities.js';

import { CliError } from './cli-errors.js';

export { CliError, CliFailureWithOutput } from './cli-errors.js';

export interface CliContextOptions {
  /** false: no database is provisioned (no embedded server started); `dataSource()` refuses. */
  readonly database?: boolean;
}

/** Marks a command that never touches the database, so none is provisioned for it. */
export function withoutDatabase<F extends object>(command: F): F & { readonly withoutDatabase: true } {
  return Object.assign(command, { withoutDatabase: true as const });
}

export function needsDatabase(command: object): boolean {
  return (command as { withoutDatabase?: boolean }).withoutDatabase !== true;
}

export interface CliContext {
  readonly config: AppConfig;
  readonly databaseUrl: string;
  /** Opens the database, migrated, for commands that need it. */
  dataSource(): Promise<DataSource>;
  /**
   * The identity features' services (CliModule) on the database, migrated: a command calls them
   * (`services().get(UsersService)`), never their SQL.
   */
  services(): Promise<INestApplicationContext>;
  close(): Promise<void>;
}

/** Configuration and database for one CLI command, the same the server uses. */
export async function openCliContext(options: CliContextOptions = {}): Promise<CliContext> {
  let config: AppConfig;
  try {
    loadEnvFile();
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) throw new CliError(`Invalid configuration: ${error.message}`);
    throw error;
  }
  if (options.database === false) return withoutDatabaseContext(config);
  const database = await provisionDatabase(config, createLogger({ logLevel: 'warn' }));
  let dataSource: DataSource | null = null;
  let services: INestApplicationContext | null = null;
  let migrated: Promise<unknown> | null = null;
  const migrate = () => (migrated ??= runMigrations(database.url));
  return {
    config,
    databaseUrl: database.url,
    async dataSource() {
      if (!dataSource) {
        await migrate();
        dataSource = await new DataSource(
          dataSourceOptions(database.url, { entities: cliEntities, extra: { max: 2 } }),
        ).initialize();
      }
      return dataSource;
    },
    async services() {
      if (!services) {
        await migrate();
        const [{ NestFactory }, { CliModule }] = await Promise.all([import('@nestjs/core'), import('./cli.module.js')]);
        services = await NestFactory.createApplicationContext(CliModule.forRoot(config, database.url), {
          logger: false,
          abortOnError: false,
        });
      }
      return services;
    },
    async close() {
      await services?.close();
      await dataSource?.destroy();
      await database.stop();
    },
  };
}

function withoutDatabaseContext(config: AppConfig): CliContext {
  const refuse = () => new CliError('this command runs without a database');
  return {
    config,
    get databaseUrl(): string {
      throw refuse();
    },
    dataSource: () => Promise.reject(refuse()),
    services: () => Promise.reject(refuse()),
    close: () => Promise.resolve(),
  };
}
