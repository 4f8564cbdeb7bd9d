/** Why POST /api/v1/tokens/verify finds a token not valid, in the order the checks run. */
export const VERIFICATION_REFUSALS = [
  'malformed',
  'invalid_signature',
  'expired',
  'not_yet_valid',
  'wrong_organization',
  'app_inactive',
  'device_blocked',
  'debug_token_revoked',
  'already_used',
] as const;

export type VerificationRefusal = (typeof VERIFICATION_REFUSALS)[number];
