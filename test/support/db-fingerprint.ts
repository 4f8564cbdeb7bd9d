// A fingerprint of every row of every table, to prove that a refused request wrote nothing:
// taken before and after, any inserted, updated or deleted row changes its table's entry.
import type { TestApp } from '../harness/test-app.js';

/** Columns a read legitimately touches (an API key's last use). */
const VOLATILE_COLUMNS = ['last_used_at'];

export type Fingerprint = Record<string, string>;

/** `exclude`: tables that change without a request (sessions are touched as they are read). */
export async function fingerprintQuery(t: TestApp, exclude: readonly string[] = ['sessions']): Promise<string> {
  const tables = await t.sql<{ name: string }>(
    `SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p') AND NOT c.relispartition ORDER BY 1`,
  );
  const row = `md5((to_jsonb(x) ${VOLATILE_COLUMNS.map((column) => `- '${column}'`).join(' ')})::text)`;
  return tables
    .map(({ name }) => name)
    .filter((name) => !exclude.includes(name))
    .map(
      (name) =>
        `SELECT '${name}' AS name, count(*) || ':' || coalesce(md5(string_agg(${row}, '' ORDER BY ${row})), '') AS print FROM "${name}" x`,
    )
    .join('\nUNION ALL\n');
}

export async function fingerprint(t: TestApp, query: string): Promise<Fingerprint> {
  const rows = await t.sql<{ name: string; print: string }>(query);
  return Object.fromEntries(rows.map((row) => [row.name, row.print]));
}

/** The tables whose rows differ between two fingerprints. */
export function changedTables(before: Fingerprint, after: Fingerprint): string[] {
  return Object.keys({ ...before, ...after }).filter((name) => before[name] !== after[name]);
}
