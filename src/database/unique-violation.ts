/** PostgreSQL's SQLSTATE for a unique constraint or index that refused a row. */
const UNIQUE_VIOLATION = '23505';

/** Whether a failed statement broke a unique constraint (a duplicate the caller answers with 409). */
export function isUniqueViolation(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: string }).code === UNIQUE_VIOLATION;
}
