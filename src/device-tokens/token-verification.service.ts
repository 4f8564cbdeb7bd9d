import { Injectable } from '@nestjs/common';
import type { OrgAuthContext } from '../common/access/auth-context.js';
import { DeviceTokenVerifier, type DeviceToken } from './device-token-verifier.js';
import { DenySet } from '../devices/deny-set.js';
import type { VerifyTokenDto } from './tokens.dto.js';
import type { VerificationRefusal } from './verification-refusals.js';
import { ConsumedTokensRepository } from './consumed-tokens.repository.js';
import { AppsRepository } from '../apps/apps.repository.js';

export type VerificationResult =
  { valid: true; claims: DeviceToken } | { valid: false; claims: null; reason: VerificationRefusal };

const refused = (reason: VerificationRefusal): VerificationResult => ({ valid: false, claims: null, reason });

/**
 * Backend verification of device tokens (App Check's verify and limited-use tokens): the
 * signature and expiry, that the caller's organization owns the token's app, that the device
 * (or the debug token) is not revoked, and that the token was not consumed. `consume` records
 * the `jti` until the token expires; the primary key decides between concurrent consumes on any
 * number of instances.
 */
@Injectable()
export class TokenVerificationService {
  constructor(
    private readonly consumed: ConsumedTokensRepository,
    private readonly verifier: DeviceTokenVerifier,
    private readonly denySet: DenySet,
    private readonly apps: AppsRepository,
  ) {}

  async verify(auth: OrgAuthContext, input: VerifyTokenDto): Promise<VerificationResult> {
    const inspected = await this.verifier.inspect(input.token);
    if (!inspected.ok) return refused(inspected.reason);
    const claims = inspected.claims;
    if (typeof claims.jti !== 'string' || claims.jti.length === 0 || claims.jti.length > 200) {
      return refused('malformed');
    }
    if (claims.org_id !== auth.organizationId) return refused('wrong_organization');
    const app = await this.apps.find(auth.organizationId, claims.app_id);
    if (!app) return refused('wrong_organization');
    if (!app.isActive) return refused('app_inactive');
    const revoked = await this.denySet.refusalNow(app.id, claims.sub);
    if (revoked) return refused(revoked);
    const used = input.consume
      ? !(await this.consumed.consume(auth.organizationId, claims.jti, claims.app_id, claims.exp!))
      : await this.consumed.isConsumed(auth.organizationId, claims.jti);
    if (used) return refused('already_used');
    return { valid: true, claims };
  }
}
