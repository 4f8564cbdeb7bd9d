import { randomUUID } from 'node:crypto';
import type { Tenant } from '../../src/apps/tenant-resolver.js';
import type { OrganizationId } from '../../src/common/access/tenant-id.js';
import type { ClaimsRepository, NewClaim } from '../../src/claims/claims.repository.js';
import { CustomClaim } from '../../src/claims/custom-claim.entity.js';

const copy = (claim: CustomClaim): CustomClaim => Object.assign(new CustomClaim(), structuredClone(claim));

/** `custom_claims` in memory. */
export class FakeClaimsRepository implements Pick<ClaimsRepository, keyof ClaimsRepository> {
  readonly claims = new Map<string, CustomClaim>();

  list(organizationId: OrganizationId) {
    return Promise.resolve(this.owned(organizationId).map(copy));
  }

  find(organizationId: OrganizationId, id: string) {
    const claim = this.claims.get(id);
    return Promise.resolve(claim && claim.organizationId === organizationId ? copy(claim) : null);
  }

  findByKey(organizationId: OrganizationId, claimKey: string) {
    const claim = this.owned(organizationId).find((c) => c.claimKey.toLowerCase() === claimKey.toLowerCase());
    return Promise.resolve(claim ? copy(claim) : null);
  }

  existingKeys(organizationId: OrganizationId, lowerKeys: readonly string[]) {
    return Promise.resolve(
      this.owned(organizationId)
        .filter((claim) => lowerKeys.includes(claim.claimKey.toLowerCase()))
        .map((claim) => claim.claimKey),
    );
  }

  nextPriority(organizationId: OrganizationId) {
    const priorities = this.owned(organizationId).map((claim) => claim.priority);
    return Promise.resolve(priorities.length ? Math.max(...priorities) + 1 : 0);
  }

  countActive(organizationId: OrganizationId) {
    return Promise.resolve(this.owned(organizationId).filter((claim) => claim.isActive).length);
  }

  async insert(organizationId: OrganizationId, fields: NewClaim) {
    if (await this.findByKey(organizationId, fields.claimKey)) return null;
    const now = new Date();
    const claim = Object.assign(new CustomClaim(), {
      ...structuredClone(fields),
      id: randomUUID(),
      organizationId,
      createdAt: now,
      updatedAt: now,
    });
    this.claims.set(claim.id, claim);
    return copy(claim);
  }

  save(organizationId: OrganizationId, claim: CustomClaim) {
    if (claim.organizationId !== organizationId) throw new Error('a claim is saved by its own organization');
    this.claims.set(claim.id, copy(claim));
    return Promise.resolve();
  }

  remove(organizationId: OrganizationId, id: string) {
    const claim = this.claims.get(id);
    if (!claim || claim.organizationId !== organizationId) return Promise.resolve(null);
    this.claims.delete(id);
    return Promise.resolve({ id, claimKey: claim.claimKey, claimType: claim.claimType });
  }

  setPriorities(organizationId: OrganizationId, order: ReadonlyMap<string, number>) {
    for (const [id, priority] of order) {
      const claim = this.claims.get(id);
      if (claim && claim.organizationId === organizationId) claim.priority = priority;
    }
    return Promise.resolve();
  }

  activeFor(tenant: Tenant) {
    return Promise.resolve(
      this.owned(tenant.organizationId)
        .filter((claim) => claim.isActive)
        .map(copy),
    );
  }

  private owned(organizationId: string): CustomClaim[] {
    return [...this.claims.values()].filter((claim) => claim.organizationId === organizationId);
  }
}
