import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { entitlementFromRow, toSubscriptionClaim, type EntitlementRow } from './entitlement-state.js';

/**
 * The reserved `subscription` claim of attestation tokens, read from ingested entitlements:
 * `{ status: 'none' }` when the device passed no subject id or the subject is unknown.
 */
@Injectable()
export class SubscriptionClaims {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async claimFor(organizationId: string, subjectId: string | null): Promise<Record<string, unknown>> {
    if (!subjectId) return toSubscriptionClaim(null);
    const rows = await this.dataSource.query<EntitlementRow[]>(
      `SELECT subject_id, tier, status, interval, source, product_id, expires_at, source_subscription_id, environment,
              auto_renew, updated_at
         FROM subject_entitlements WHERE organization_id = $1 AND subject_id = $2`,
      [organizationId, subjectId],
    );
    return toSubscriptionClaim(rows[0] ? entitlementFromRow(rows[0]) : null);
  }
}
