import { DataSource } from 'typeorm';
import { ConfigError, loadConfig, type AppConfig } from '../config/app-config.js';
import { createLogger } from '../common/logging/logger.js';
import { dataSourceOptions } from '../database/data-source-options.js';
import { provisionDatabase } from '../database/database-runtime.js';
import { runMigrations } from '../database/migrate.js';

/** A failure the CLI reports as one line on stderr with a non-zero exit. */
export class CliError extends Error {}

export interface CliContext {
  readonly config: AppConfig;
  readonly databaseUrl: string;
  /** Opens the database, migrated, for commands that need it. */
  dataSource(): Promise<DataSource>;
  close(): Promise<void>;
}

/** Configuration and database for one CLI command, the same the server uses. */
export async function openCliContext(): Promise<CliContext> {
  let config: AppConfig;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) throw new CliError(`Invalid configuration: ${error.message}`);
    throw error;
  }
  const database = await provisionDatabase(config, createLogger('warn'));
  let dataSource: DataSource | null = null;
  return {
    config,
    databaseUrl: database.url,
    async dataSource() {
      if (!dataSource) {
        await runMigrations(database.url);
        dataSource = await new DataSource(dataSourceOptions(database.url, { extra: { max: 2 } })).initialize();
      }
      return dataSource;
    },
    async close() {
      await dataSource?.destroy();
      await database.stop();
    },
  };
}
