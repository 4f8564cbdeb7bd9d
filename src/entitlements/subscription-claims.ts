import { Injectable } from '@nestjs/common';
import type { OrganizationId } from '../common/access/tenant-id.js';
import { toSubscriptionClaim } from './entitlement-state.js';
import { EntitlementsRepository } from './entitlements.repository.js';

/**
 * The reserved `subscription` claim of attestation tokens, read from ingested entitlements:
 * `{ status: 'none' }` when the device passed no subject id or the subject is unknown.
 */
@Injectable()
export class SubscriptionClaims {
  constructor(private readonly entitlements: EntitlementsRepository) {}

  async claimFor(organizationId: OrganizationId, subjectId: string | null): Promise<Record<string, unknown>> {
    if (!subjectId) return toSubscriptionClaim(null);
    return toSubscriptionClaim(await this.entitlements.find(organizationId, subjectId));
  }
}
