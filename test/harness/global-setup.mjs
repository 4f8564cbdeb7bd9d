// Jest loads global setup outside its TypeScript transform, so this file is plain JavaScript
// and uses the compiled service (built here when the sources changed).
import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
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
  execFileSync(process.execPath, [join(root, 'scripts/build-if-needed.mjs'), '--allow-type-errors'], { stdio: 'inherit' });
  const { EmbeddedPostgres } = await import(join(root, 'dist/src/database/embedded-postgres.js'));
  const { runMigrations } = await import(join(root, 'dist/src/database/migrate.js'));

  let adminUrl = process.env.DATABASE_URL;
  if (!adminUrl) {
    const server = new EmbeddedPostgres({ dir: mkdtempSync(join(tmpdir(), 'attestly-test-pg-')), ephemeral: true });
    await server.start();
    globalThis.__embeddedPostgres = server;
    adminUrl = server.url();
  }
  const template = `attestly_test_${process.pid}_${Date.now().toString(36)}`;
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  await client.query(`CREATE DATABASE "${template}"`);
  await client.end();
  const url = new URL(adminUrl);
  url.pathname = `/${template}`;
  await runMigrations(url.toString());
  // Each test app writes there what it answered and how that matched the OpenAPI document.
  process.env.OPENAPI_CHECK_DIR = mkdtempSync(join(tmpdir(), 'attestly-openapi-check-'));
  process.env.TEST_DB_ADMIN_URL = adminUrl;
  process.env.TEST_DB_TEMPLATE = template;
}
