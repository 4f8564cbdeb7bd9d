/** Whether a failed statement carries the SQLSTATE `state` (pg's `code` on its error). */
export function hasSqlState(error: unknown, state: string): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === state;
}
