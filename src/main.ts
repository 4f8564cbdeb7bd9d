import { ConfigError, loadConfig, type AppConfig } from './config/app-config.js';
import { loadEnvFile } from './config/env-file.js';
import { createLogger } from './common/logging/logger.js';
import { provisionDatabase } from './database/database-runtime.js';
import { runMigrations } from './database/migrate.js';
import { createApp } from './app.js';
import { connectionDraining } from './common/http/connection-draining.js';

function readConfig(): AppConfig {
  try {
    loadEnvFile();
    return loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`Invalid configuration: ${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
}

/** Released when the start fails, so an embedded server this process started does not stay behind. */
let database: Awaited<ReturnType<typeof provisionDatabase>> | null = null;

async function main(): Promise<void> {
  const config = readConfig();
  const logger = createLogger(config);
  const provisioned = await provisionDatabase(config, logger);
  database = provisioned;
  const applied = await runMigrations(provisioned.url);
  if (applied.length) logger.info({ applied }, 'migrations applied');

  const app = await createApp({ ...config, databaseUrl: provisioned.url }, logger);
  const connections = connectionDraining(app.getHttpServer());
  await app.listen(config.port, config.host);
  logger.info({ port: config.port, baseUrl: config.baseUrl, commit: config.serviceCommit }, 'listening');

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down: finishing in-flight requests');
    // Keep-alive clients are told to go (Connection: close) rather than served until they go quiet.
    await connections.drain();
    try {
      await app.close();
      await provisioned.stop();
      process.exit(0);
    } catch (error) {
      logger.error({ err: error }, 'shutdown failed');
      process.exit(1);
    }
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}

main().catch(async (error: unknown) => {
  process.stderr.write(`Failed to start: ${error instanceof Error ? error.message : String(error)}\n`);
  await database?.stop().catch(() => undefined);
  process.exit(1);
});
