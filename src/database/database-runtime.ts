import { join } from 'node:path';
import pg from 'pg';
import type { Logger } from 'pino';
import type { AppConfig } from '../config/app-config.js';
import { EmbeddedPostgres } from './embedded-postgres.js';

export const EMBEDDED_DATABASE_NAME = 'attestly';

/**
 * Resolves where the data lives: `DATABASE_URL`, or a PostgreSQL server this process starts
 * under `DATA_DIR`. Returns the URL and a stop function for shutdown.
 */
export async function provisionDatabase(
  config: AppConfig,
  logger: Logger,
): Promise<{ url: string; stop: () => Promise<void> }> {
  if (config.databaseUrl) return { url: config.databaseUrl, stop: () => Promise.resolve() };
  const server = new EmbeddedPostgres({ dir: join(config.dataDir, 'postgres'), log: (line) => logger.info(line) });
  await server.start();
  await ensureDatabase(server.url(), EMBEDDED_DATABASE_NAME);
  return { url: server.url(EMBEDDED_DATABASE_NAME), stop: () => server.stop() };
}

async function ensureDatabase(adminUrl: string, name: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (!rowCount) await client.query(`CREATE DATABASE "${name}"`);
  } finally {
    await client.end();
  }
}
