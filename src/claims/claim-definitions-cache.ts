import { Injectable } from '@nestjs/common';
import type { Tenant } from '../apps/tenant-resolver.js';
import { ClaimsRepository } from './claims.repository.js';
import { toClaimDefinition } from './custom-claim.entity.js';
import type { ClaimDefinition } from './engine/index.js';

/** Other instances see a change within this time; this instance at once (`invalidate`). */
export const CLAIM_DEFINITIONS_TTL_MS = 30_000;
const MAX_ORGANIZATIONS = 10_000;

interface Entry {
  expiresAt: number;
  definitions: Promise<ClaimDefinition[]>;
}

/**
 * The active claim definitions of each organization, kept briefly so minting a token does not
 * read the claims table every time. Concurrent misses for one organization share one query.
 */
@Injectable()
export class ClaimDefinitionsCache {
  private readonly entries = new Map<string, Entry>();

  constructor(private readonly claims: ClaimsRepository) {}

  /** The active definitions of the tenant's organization. */
  activeDefinitions(tenant: Tenant): Promise<ClaimDefinition[]> {
    const { organizationId } = tenant;
    const cached = this.entries.get(organizationId);
    if (cached && cached.expiresAt > Date.now()) return cached.definitions;
    const definitions = this.load(tenant);
    const entry = { expiresAt: Date.now() + CLAIM_DEFINITIONS_TTL_MS, definitions };
    this.entries.delete(organizationId);
    if (this.entries.size >= MAX_ORGANIZATIONS) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(organizationId, entry);
    // A failed read is not kept: the next token tries again.
    definitions.catch(() => {
      if (this.entries.get(organizationId) === entry) this.entries.delete(organizationId);
    });
    return definitions;
  }

  invalidate(organizationId: string): void {
    this.entries.delete(organizationId);
  }

  private async load(tenant: Tenant): Promise<ClaimDefinition[]> {
    return (await this.claims.activeFor(tenant)).map(toClaimDefinition);
  }
}
