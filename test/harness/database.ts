import pg from 'pg';

/** Where the suite's databases live: set by the global setup for every test worker. */
export function harnessDatabase(): { adminUrl: string; template: string } {
  const adminUrl = process.env.TEST_DB_ADMIN_URL;
  const template = process.env.TEST_DB_TEMPLATE;
  if (!adminUrl || !template) throw new Error('the e2e global setup did not run');
  return { adminUrl, template };
}

export function databaseUrl(adminUrl: string, name: string): string {
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

export async function adminQuery(adminUrl: string, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/** A fresh database copied from the migrated template: each test file gets its own. */
export async function createTestDatabase(): Promise<{ name: string; url: string }> {
  const { adminUrl, template } = harnessDatabase();
  const name = `${template}_${Math.random().toString(36).slice(2, 10)}`;
  for (let attempt = 0; ; attempt++) {
    try {
      await adminQuery(adminUrl, `CREATE DATABASE "${name}" TEMPLATE "${template}"`);
      return { name, url: databaseUrl(adminUrl, name) };
    } catch (error) {
      // Two workers cloning the template at the same instant: PostgreSQL refuses one; try again.
      if (attempt > 20 || !String(error).includes('being accessed by other users')) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100 + Math.random() * 200));
    }
  }
}

export async function dropTestDatabase(name: string): Promise<void> {
  const { adminUrl } = harnessDatabase();
  await adminQuery(adminUrl, `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
}
