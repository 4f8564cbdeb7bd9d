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
 * and it names its columns. `name` is what the sessions know it as; it changes when a session's
 * copy can no longer run (see `queryPrepared`).
 */
export interface PreparedStatement {
  readonly name: string;
  readonly text: string;
}

class Prepared implements PreparedStatement {
  private generation = 0;

  constructor(
    private readonly base: string,
    readonly text: string,
  ) {}

  get name(): string {
    return this.generation === 0 ? this.base : `${this.base}_${this.generation}`;
  }

  /**
   * Gives the statement a new name, which every session parses afresh on its next run: pg keeps,
   * per connection, the names it has parsed, and a stale copy would fail there for ever. A copy is
   * stale when its result type changed (a migration altered a column it returns: "cached plan must
   * not change result type", 0A000) or the session forgot it (26000: a `DEALLOCATE`, a pooler).
   */
  renew(): void {
    this.generation += 1;
  }
}

const preparedTexts = new Map<string, string>();

/** Declares a prepared statement; a name already given to another text is a programming error. */
export function preparedStatement(name: string, text: string): PreparedStatement {
  if (!/^[a-z][a-z0-9_]{0,50}$/.test(name)) throw new Error(`not a statement name: ${JSON.stringify(name)}`);
  const known = preparedTexts.get(name);
  if (known !== undefined && known !== text) throw new Error(`the prepared statement ${name} has two texts`);
  preparedTexts.set(name, text);
  return new Prepared(name, text);
}

/**
 * The rows of a prepared statement, run where `manager` runs its statements: on the connection of
 * its transaction (a unit of work, a held connection), else autocommitted on a connection of the
 * pool, which goes back to the pool afterwards whatever the statement answered, as with
 * `manager.query`.
 */
export async function queryPrepared<T>(
  manager: EntityManager,
  statement: PreparedStatement,
  parameters: unknown[],
): Promise<T[]> {
  const transaction = manager.queryRunner;
  if (transaction) {
    const released = () => new Error(`${statement.name}: the connection of this unit of work was released`);
    if (transaction.isReleased) throw released();
    const client = (await transaction.connect()) as pg.ClientBase;
    if (transaction.isReleased) throw released();
    return runPrepared<T>(client, statement, parameters);
  }
  return queryPreparedOnPool<T>(
    (manager.dataSource.driver as unknown as { master: pg.Pool }).master,
    statement,
    parameters,
  );
}

/**
 * A prepared statement autocommitted on a connection of `pool`, given back to it whatever the
 * statement answered (a connection that broke meanwhile is dropped).
 */
export async function queryPreparedOnPool<T>(
  pool: pg.Pool,
  statement: PreparedStatement,
  parameters: unknown[],
): Promise<T[]> {
  const client = await pool.connect();
  // A connection that breaks while checked out emits 'error' on its client: heard here (unheard,
  // it would crash the process), and the client is then given back as broken, so the pool drops it.
  let broken: Error | undefined;
  const onError = (error: Error) => {
    broken = error;
  };
  client.on('error', onError);
  try {
    return await runPrepared<T>(client, statement, parameters);
  } finally {
    client.removeListener('error', onError);
    client.release(broken);
  }
}

/**
 * Runs the statement on `client`. A pg error (with its SQLSTATE `code`) is thrown with the
 * statement's name; one that says the session's copy is stale renews the statement, so that its
 * next run parses it again wherever it runs.
 */
async function runPrepared<T>(
  client: pg.ClientBase,
  statement: PreparedStatement,
  parameters: unknown[],
): Promise<T[]> {
  const name = statement.name;
  try {
    return (await client.query<T & pg.QueryResultRow>({ name, text: statement.text, values: parameters })).rows;
  } catch (error) {
    if (isStaleCopy(error) && statement instanceof Prepared) statement.renew();
    if (error instanceof Error) Object.assign(error, { statement: name });
    throw error;
  }
}

function isStaleCopy(error: unknown): boolean {
  const { code, message } = error as { code?: unknown; message?: unknown };
  if (code === '26000') return true;
  return code === '0A000' && typeof message === 'string' && message.includes('cached plan must not change result type');
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
