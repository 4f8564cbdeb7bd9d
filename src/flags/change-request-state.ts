/** The states of a flag change request, from `pending` to `applied`, `rejected` or `stale`. */
export const CHANGE_REQUEST_STATES = ['pending', 'approved', 'rejected', 'applied', 'stale'] as const;
export type ChangeRequestState = (typeof CHANGE_REQUEST_STATES)[number];
