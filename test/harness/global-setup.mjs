// Jest loads global setup outside its TypeScript transform, so this file is plain JavaScript
// and uses the compiled service (built here when the sources changed).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';

const root = new URL('../..', import.meta.url).pathname;

/**
 * Migrates one template database per run; every test file then clones it
 * (`CREATE DATABASE … TEMPLATE`), so files run in parallel on their own data.
 * With DATABASE_URL the databases are made on that server, else on an embedded one.
 */
export default async function globalSetup() {
  execFileSync(process.execPath, [join(root, 'scripts/build-if-needed.mjs'), '--allow-type-errors'], {
    stdio: 'inherit',
  });
  const { EmbeddedPostgres } = await import(join(root, 'dist/src/database/embedded-postgres.js'));
  const { runMigrations } = await import(join(root, 'dist/src/database/migrate.js'));

  let adminUrl = process.env.DATABASE_URL;
  const template = `attestly_test_${process.pid}_${Date.now().toString(36)}`;
  // Ctrl-C or a kill: the run's databases, its embedded server and that server's directory go
  // as at a clean end (global teardown does not run then).
  const interrupted = (signal) => {
    void removeTestDatabases().finally(() => process.exit(signal === 'SIGINT' ? 130 : 143));
  };
  for (const signal of ['SIGINT', 'SIGTERM']) process.once(signal, interrupted);
  globalThis.__removeTestDatabases = removeTestDatabases;
  if (!adminUrl) {
    const dir = mkdtempSync(join(tmpdir(), 'attestly-test-pg-'));
    globalThis.__embeddedPostgresDir = dir;
    const server = new EmbeddedPostgres({ dir, ephemeral: true });
    globalThis.__embeddedPostgres = server;
    await server.start();
    adminUrl = server.url();
  }
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  await client.query(`CREATE DATABASE "${template}"`);
  await client.end();
  const url = new URL(adminUrl);
  url.pathname = `/${template}`;
  await runMigrations(url.toString());
  await seedSigningKey(url.toString());
  // Each test app writes there what it answered and how that matched the OpenAPI document.
  process.env.OPENAPI_CHECK_DIR = mkdtempSync(join(tmpdir(), 'attestly-openapi-check-'));
  process.env.TEST_DB_ADMIN_URL = adminUrl;
  process.env.TEST_DB_TEMPLATE = template;
}

/**
 * The template gets the RSA signing key every service generates on its first start, by the
 * service's own code: without it each test app (about a hundred per run) generated a 2048-bit key
 * while it booted. Each file's database is still a copy with exactly one current key.
 */
async function seedSigningKey(url) {
  const { DataSource } = await import('typeorm');
  const dataSource = new DataSource({ type: 'postgres', url });
  await dataSource.initialize();
  try {
    const { SigningKeysService } = await import(join(root, 'dist/src/device-tokens/signing-keys.service.js'));
    const { SigningKeysRepository } = await import(join(root, 'dist/src/device-tokens/signing-keys.repository.js'));
    const { UnitOfWork } = await import(join(root, 'dist/src/database/unit-of-work.js'));
    const uow = new UnitOfWork(dataSource);
    await new SigningKeysService(uow, new SigningKeysRepository(uow), { jwtPrivateKey: null }).onModuleInit();
  } catch (error) {
    // The service moved or changed shape: the tests stay right, each app makes its own key.
    process.stderr.write(
      `test/harness/global-setup.mjs: no signing key in the template (${error instanceof Error ? error.message : error}); ` +
        'each test app generates its own, slower: update seedSigningKey\n',
    );
  } finally {
    await dataSource.destroy();
  }
}

/**
 * Drops the run's template and every clone of it (files that failed before their own cleanup
 * leave theirs), stops the embedded server and removes its directory. Called by the global
 * teardown and on SIGINT/SIGTERM; each step goes on when the one before fails.
 */
async function removeTestDatabases() {
  const adminUrl = process.env.TEST_DB_ADMIN_URL;
  const template = process.env.TEST_DB_TEMPLATE;
  if (adminUrl && template) {
    try {
      const client = new pg.Client({ connectionString: adminUrl });
      await client.connect();
      try {
        const { rows } = await client.query('SELECT datname FROM pg_database WHERE datname LIKE $1', [`${template}%`]);
        for (const { datname } of rows) await client.query(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`);
      } finally {
        await client.end();
      }
    } catch (error) {
      process.stderr.write(`could not drop the test databases: ${error instanceof Error ? error.message : error}\n`);
    }
  }
  await globalThis.__embeddedPostgres?.stop().catch(() => undefined);
  globalThis.__embeddedPostgres = undefined;
  const dir = globalThis.__embeddedPostgresDir;
  if (dir) rmSync(dir, { recursive: true, force: true });
  globalThis.__embeddedPostgresDir = undefined;
  const checks = process.env.OPENAPI_CHECK_DIR;
  if (checks) rmSync(checks, { recursive: true, force: true });
}
