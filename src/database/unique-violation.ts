import { hasSqlState } from './sql-state.js';

/** PostgreSQL's SQLSTATE for a unique constraint or index that refused a row. */
const UNIQUE_VIOLATION = '23505';

/** Whether a failed statement broke a unique constraint (a duplicate the caller answers with 409). */
export function isUniqueViolation(error: unknown): boolean {
  return hasSqlState(error, UNIQUE_VIOLATION);
}
