/** Anything that runs SQL: a DataSource or a transaction's EntityManager. */
interface Queryable {
  query(sql: string, parameters?: unknown[]): Promise<unknown>;
}

/**
 * The rows of a statement. TypeORM's PostgreSQL driver answers `UPDATE … RETURNING` and
 * `DELETE … RETURNING` with `[rows, affectedCount]` and everything else with the rows; this
 * gives the rows either way.
 */
export async function queryRows<T>(runner: Queryable, sql: string, parameters?: unknown[]): Promise<T[]> {
  const result = await runner.query(sql, parameters);
  if (Array.isArray(result) && result.length === 2 && Array.isArray(result[0]) && typeof result[1] === 'number') {
    return result[0] as T[];
  }
  return result as T[];
}

const SQL_REFERENCE = /^(?:\$[1-9]\d{0,2}|[a-z_][a-z0-9_]*\.[a-z_][a-z0-9_]*)$/;

/**
 * `reference` checked to be what an owner's SQL fragment (a lateral join, a sub-select) may splice
 * into its text: a positional parameter (`$2`) or a qualified column of the caller's query
 * (`a.organization_id`). Never a value: a value goes in the parameters, so a fragment cannot be
 * handed something a tenant wrote.
 */
export function sqlReference(reference: string): string {
  if (!SQL_REFERENCE.test(reference))
    throw new Error(`not a parameter or column reference: ${JSON.stringify(reference)}`);
  return reference;
}

const SQL_IDENTIFIER = /^[a-z_][a-z0-9_]{0,62}$/;

/** `name` checked to be a plain lower-case SQL identifier (an alias an owner's fragment introduces). */
export function sqlIdentifier(name: string): string {
  if (!SQL_IDENTIFIER.test(name)) throw new Error(`not an SQL identifier: ${JSON.stringify(name)}`);
  return name;
}
