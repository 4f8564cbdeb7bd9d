import { queryRows } from './sql.js';

/** Anything that runs SQL: a DataSource or a transaction's EntityManager. */
type Runner = Parameters<typeof queryRows>[0];

/**
 * A service-wide secret kept in `service_settings` (the session secret, the SSO and push
 * encryption keys when the configuration gives none): `generate()` is stored the first time, and
 * every instance then reads the same value. The one reader and writer of the table; each key
 * belongs to the feature that asks for it.
 */
export async function storedServiceSecret(runner: Runner, key: string, generate: () => string): Promise<string> {
  await runner.query(`INSERT INTO service_settings (key, value) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING`, [
    key,
    generate(),
  ]);
  const rows = await queryRows<{ value: string }>(runner, `SELECT value FROM service_settings WHERE key = $1`, [key]);
  return rows[0].value;
}
