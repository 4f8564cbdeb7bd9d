import { randomBytes } from 'node:crypto';

/** Prefix of an app's subject signing secret, so a leaked one is recognizable. */
export const SUBJECT_SECRET_PREFIX = 'subsec_';

/** A new subject signing secret for an app (the tenant's backend signs subjects with it). */
export function generateSubjectSecret(): string {
  return `${SUBJECT_SECRET_PREFIX}${randomBytes(32).toString('base64url')}`;
}
