import { AppException, conflict, describeFields, forbidden, type FieldError } from '../common/errors/app-exception.js';
import type { TierDefinition } from '../common/tiers.js';
import type { ClaimType } from './engine/index.js';

/**
 * Invalid claim input: 400 naming every problem, as the claims routes document for invalid input.
 * The problems are kept so that a surface can name the fields in its own case.
 */
export class InvalidClaimException extends AppException {
  constructor(readonly problems: readonly FieldError[]) {
    super(400, 'bad_request', describeFields(problems), {
      hint: problems[0] ? `Check the "${problems[0].field}" field` : undefined,
    });
  }
}

export function invalidClaim(problems: readonly FieldError[]): InvalidClaimException {
  return new InvalidClaimException(problems);
}

export function claimLimitReached(tier: TierDefinition): AppException {
  const max = tier.limits.maxCustomClaims;
  return new AppException(403, 'claim_limit_reached', `The ${tier.display} plan allows ${max} active custom claims`, {
    hint: 'Deactivate or delete a claim, or upgrade the plan',
  });
}

export function claimTypeUnavailable(tier: TierDefinition, claimType: ClaimType): AppException {
  if (claimType === 'external') {
    return new AppException(403, 'claim_type_unavailable', 'External claims need the Enterprise plan', {
      hint: 'Upgrade to Enterprise, or use a static, conditional or dynamic claim',
    });
  }
  return new AppException(
    403,
    'claim_type_unavailable',
    `${claimType} claims are not available on the ${tier.display} plan`,
    { hint: `The ${tier.display} plan allows ${tier.allowedFormClaimTypes.join(', ')} claims; upgrade for more` },
  );
}

export function bulkClaimsUnavailable(tier: TierDefinition): AppException {
  return new AppException(
    403,
    'bulk_claims_unavailable',
    `Bulk creation is not available on the ${tier.display} plan`,
    {
      hint: 'Create claims one at a time, or upgrade the plan',
    },
  );
}

export function duplicateClaimKey(claimKey: string): AppException {
  return conflict(`A claim with the key "${claimKey}" already exists`, {
    hint: 'Claim keys are unique per organization, in any casing',
  });
}

export function consoleKeyRefused(): AppException {
  return forbidden('This API key cannot manage claims', { hint: 'Use a gpat_ or aat_ key, or a dashboard session' });
}
