import pg from 'pg';

export default async function globalTeardown() {
  const adminUrl = process.env.TEST_DB_ADMIN_URL;
  const template = process.env.TEST_DB_TEMPLATE;
  if (adminUrl && template) {
    const client = new pg.Client({ connectionString: adminUrl });
    await client.connect();
    // Test files that failed before their own cleanup leave clones behind: drop them too.
    const { rows } = await client.query('SELECT datname FROM pg_database WHERE datname LIKE $1', [`${template}%`]);
    for (const { datname } of rows) await client.query(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`);
    await client.end();
  }
  await globalThis.__embeddedPostgres?.stop();
}
