/** Anything that runs SQL: a DataSource or a transaction's EntityManager. */
interface Queryable {
  query(sql: string, parameters?: unknown[]): Promise<unknown>;
}

/** What `readChanges` asks: the rows in the set on a first read, the rows changed since a cursor after. */
export interface ChangeQuery {
  /** The columns read, of the table aliased `t` (`t.app_id, t.key_id`). */
  columns: string;
  /** The table, aliased `t` (`devices t`). */
  table: string;
  /** The condition of a first, whole read (`t.is_blocked`). */
  whole: string;
  /** The condition of a read since a cursor, given the cursor's parameter as `xid8` (`t.block_xid >= $1::xid8`). */
  changedSince: (cursor: string) => string;
  /** The name of a column read that is never null in a row, telling rows from the cursor-only answer (`key_id`). */
  key: string;
}

/**
 * Reads a set incrementally by transaction ids (decision 0065). The table's rows carry the
 * `xid8` of the transaction that last changed what they add to the set (set by a trigger); a read
 * answers, in the same statement and so the same snapshot, `pg_snapshot_xmin` of that snapshot:
 * every transaction with a lower id had ended when the read was made, so its rows were seen. The
 * next read asks for the rows whose marker is at least that cursor: a transaction that was still
 * running, whatever the order in which it and later ones commit, is read next time. Rows a read
 * sees twice are applied twice (states, not events: idempotent). What a read costs is what
 * changed since the oldest transaction running at the previous read began, not the table's size.
 *
 * `parameters` are the query's own (`$1`…); the cursor is appended after them. Should transaction
 * ids go back (a restore into a new cluster), the read is made whole again.
 */
export async function readChanges<Row>(
  db: Queryable,
  query: ChangeQuery,
  since: string | null,
  parameters: unknown[] = [],
): Promise<{ cursor: string; rows: Row[] }> {
  const cursorParameter = `$${parameters.length + 1}`;
  const condition = since === null ? query.whole : query.changedSince(cursorParameter);
  const result = (await db.query(
    `SELECT s.cursor AS "__cursor", ${query.columns}
       FROM (SELECT pg_snapshot_xmin(pg_current_snapshot())::text AS cursor) s
       LEFT JOIN ${query.table} ON ${condition}`,
    since === null ? parameters : [...parameters, since],
  )) as (Row & { __cursor: string; [column: string]: unknown })[];
  const cursor = result[0].__cursor;
  // Transaction ids went back (the database was restored into a new cluster): what changed since
  // cannot be told by them, so the set is read whole again.
  if (since !== null && BigInt(cursor) < BigInt(since)) return readChanges(db, query, null, parameters);
  const keyColumn = query.key;
  const rows: Row[] = [];
  for (const { __cursor: _cursor, ...row } of result) {
    if (row[keyColumn] !== null && row[keyColumn] !== undefined) rows.push(row as unknown as Row);
  }
  return { cursor, rows };
}
