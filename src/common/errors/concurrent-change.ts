/**
 * A statement that lost a race with another transaction, by PostgreSQL's SQLSTATE: a
 * serialization failure (40001), a deadlock the server broke (40P01), or a row written for a
 * parent another request deleted meanwhile (23503 on insert or update). The request conflicts
 * with the state it ran into, which a retry sees: 409, not a 500. A foreign key that refuses a
 * deletion ("update or delete on table … is still referenced") is not a race and stays a 500.
 * Pure: no framework, no I/O.
 */
export function isConcurrentChange(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const { code, message } = error as { code?: unknown; message?: unknown };
  if (code === '40001' || code === '40P01') return true;
  return code === '23503' && typeof message === 'string' && message.startsWith('insert or update on table');
}
