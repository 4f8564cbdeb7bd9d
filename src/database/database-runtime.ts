import { join } from 'node:path';
import type { Logger } from 'pino';
import type { AppConfig } from '../config/app-config.js';
import { EmbeddedCluster } from './embedded-cluster.js';

export const EMBEDDED_DATABASE_NAME = 'attestly';

/**
 * Resolves where the data lives: `DATABASE_URL`, or the embedded PostgreSQL under `DATA_DIR`,
 * which the first process to need it starts and every other one shares (see EmbeddedCluster).
 * Returns the URL and a stop function for shutdown: it stops the server only when this process
 * owns it and no other process still uses it.
 */
export async function provisionDatabase(
  config: AppConfig,
  logger: Logger,
): Promise<{ url: string; stop: () => Promise<void> }> {
  if (config.databaseUrl) return { url: config.databaseUrl, stop: () => Promise.resolve() };
  const cluster = await EmbeddedCluster.join({
    dir: join(config.dataDir, 'postgres'),
    database: EMBEDDED_DATABASE_NAME,
    log: (line) => logger.info(line),
  });
  return { url: cluster.url(EMBEDDED_DATABASE_NAME), stop: () => cluster.release() };
}
