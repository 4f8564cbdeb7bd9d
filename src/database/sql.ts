import type pg from 'pg';
import type { EntityManager } from 'typeorm';

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

/**
 * A constant statement PostgreSQL parses and plans once per connection and then only binds and
 * runs (a named prepared statement, decision 0077): for the statements of the hot paths, where
 * parsing and planning an unnamed statement cost the database as much as running it. Its text must
 * not vary between calls (one name, one text: `preparedStatement` refuses a second text at load),
 * and it names its columns (a prepared `SELECT *` of a table fails once a migration adds one).
 */
export interface PreparedStatement {
  readonly name: string;
  readonly text: string;
}

const preparedTexts = new Map<string, string>();

/** Declares a prepared statement; a name already given to another text is a programming error. */
export function preparedStatement(name: string, text: string): PreparedStatement {
  if (!/^[a-z][a-z0-9_]{0,62}$/.test(name)) throw new Error(`not a statement name: ${JSON.stringify(name)}`);
  const known = preparedTexts.get(name);
  if (known !== undefined && known !== text) throw new Error(`the prepared statement ${name} has two texts`);
  preparedTexts.set(name, text);
  return { name, text };
}

/**
 * The rows of a prepared statement, run where `manager` runs its statements: on the connection of
 * its transaction (a unit of work, a held connection), else autocommitted on a connection of the
 * pool, as `manager.query` would; only the statement's parsing is kept per connection. A pg error
 * (with its SQLSTATE `code`) is thrown as it comes.
 */
export async function queryPrepared<T>(
  manager: EntityManager,
  statement: PreparedStatement,
  parameters: unknown[],
): Promise<T[]> {
  const config = { name: statement.name, text: statement.text, values: parameters };
  const transaction = manager.queryRunner;
  if (transaction) {
    if (transaction.isReleased) throw new Error(`${statement.name}: the connection of this unit of work was released`);
    const client = (await transaction.connect()) as pg.ClientBase;
    return (await client.query<T & pg.QueryResultRow>(config)).rows;
  }
  const pool = (manager.connection.driver as unknown as { master: pg.Pool }).master;
  return (await pool.query<T & pg.QueryResultRow>(config)).rows;
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
