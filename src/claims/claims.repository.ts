import { Injectable } from '@nestjs/common';
import type { Tenant } from '../apps/tenant-resolver.js';
import { trustOrganizationId, type OrganizationId } from '../common/access/tenant-id.js';
import { queryRows } from '../database/sql.js';
import { isUniqueViolation } from '../database/unique-violation.js';
import { UnitOfWork } from '../database/unit-of-work.js';
import { CustomClaim } from './custom-claim.entity.js';

/** A new claim's fields. */
export type NewClaim = Omit<CustomClaim, 'id' | 'organizationId' | 'createdAt' | 'updatedAt'>;

/** What a deletion removed. */
export interface RemovedClaim {
  id: string;
  claimKey: string;
  claimType: string;
}

/** The owner of `custom_claims`: every method takes the organization. */
@Injectable()
export class ClaimsRepository {
  constructor(private readonly uow: UnitOfWork) {}

  list(organizationId: OrganizationId): Promise<CustomClaim[]> {
    return this.claims().findBy({ organizationId });
  }

  /** The claim, or null; `lock` holds it FOR UPDATE until the unit of work ends. */
  find(organizationId: OrganizationId, id: string, options: { lock?: boolean } = {}): Promise<CustomClaim | null> {
    if (!options.lock) return this.claims().findOneBy({ id, organizationId });
    return this.claims()
      .createQueryBuilder('claim')
      .setLock('pessimistic_write')
      .where('claim.id = :id AND claim.organization_id = :organizationId', { id, organizationId })
      .getOne();
  }

  /** The claim whose key is `claimKey` in any casing (keys are unique in any casing), or null. */
  findByKey(organizationId: OrganizationId, claimKey: string): Promise<CustomClaim | null> {
    return this.claims()
      .createQueryBuilder('claim')
      .where('claim.organization_id = :organizationId AND lower(claim.claim_key) = lower(:claimKey)', {
        organizationId,
        claimKey,
      })
      .getOne();
  }

  /** The keys among `lowerKeys` (lower case) the organization already has, as stored. */
  async existingKeys(organizationId: OrganizationId, lowerKeys: readonly string[]): Promise<string[]> {
    const rows = await queryRows<{ claim_key: string }>(
      this.uow.manager(),
      `SELECT claim_key FROM custom_claims WHERE organization_id = $1 AND lower(claim_key) = ANY($2::text[])`,
      [organizationId, [...lowerKeys]],
    );
    return rows.map((row) => row.claim_key);
  }

  /** The priority after the organization's last claim (0 without claims). */
  async nextPriority(organizationId: OrganizationId): Promise<number> {
    const [{ next }] = await queryRows<{ next: number }>(
      this.uow.manager(),
      `SELECT COALESCE(max(priority) + 1, 0)::int AS next FROM custom_claims WHERE organization_id = $1`,
      [organizationId],
    );
    return next;
  }

  /** How many of the organization's claims are active. */
  countActive(organizationId: OrganizationId): Promise<number> {
    return this.claims().countBy({ organizationId, isActive: true });
  }

  /** Inserts the claim; null when the organization has a claim with this key in any casing. */
  async insert(organizationId: OrganizationId, fields: NewClaim): Promise<CustomClaim | null> {
    const claim = this.claims().create({ ...fields, organizationId });
    try {
      await this.claims().save(claim);
    } catch (error) {
      if (isUniqueViolation(error)) return null;
      throw error;
    }
    return claim;
  }

  /** Saves the claim's fields as they are now. */
  async save(organizationId: OrganizationId, claim: CustomClaim): Promise<void> {
    if (claim.organizationId !== organizationId) throw new Error('a claim is saved by its own organization');
    await this.claims().save(claim);
  }

  /** Deletes the claim; null when the organization has none with this id. */
  async remove(organizationId: OrganizationId, id: string): Promise<RemovedClaim | null> {
    const rows = await queryRows<{ id: string; claim_key: string; claim_type: string }>(
      this.uow.manager(),
      `DELETE FROM custom_claims WHERE id = $1 AND organization_id = $2 RETURNING id, claim_key, claim_type`,
      [id, organizationId],
    );
    return rows[0] ? { id: rows[0].id, claimKey: rows[0].claim_key, claimType: rows[0].claim_type } : null;
  }

  /** Sets each listed claim's priority, in one statement; claims already there are left alone. */
  async setPriorities(organizationId: OrganizationId, order: ReadonlyMap<string, number>): Promise<void> {
    await this.uow.manager().query(
      `UPDATE custom_claims AS claim SET priority = input.priority, updated_at = now()
         FROM unnest($2::uuid[], $3::int[]) AS input(id, priority)
        WHERE claim.id = input.id AND claim.organization_id = $1 AND claim.priority <> input.priority`,
      [organizationId, [...order.keys()], [...order.values()]],
    );
  }

  /**
   * The active claims of the tenant's organization (minting a token for the tenant's app), as
   * committed: read outside any open unit of work, since the result is cached.
   */
  activeFor(tenant: Tenant): Promise<CustomClaim[]> {
    // The SDK's tenant resolver established the tenant's organization.
    const organizationId = trustOrganizationId(tenant.organizationId);
    return this.uow.outside(() => this.claims().findBy({ organizationId, isActive: true }));
  }

  private claims() {
    return this.uow.manager().getRepository(CustomClaim);
  }
}
