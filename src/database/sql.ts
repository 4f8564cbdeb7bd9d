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
