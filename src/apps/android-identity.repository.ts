import { Injectable } from '@nestjs/common';
import { randomSecret } from '../common/crypto.js';
import { storedServiceSecret } from '../database/service-settings.js';
import { queryRows } from '../database/sql.js';
import { UnitOfWork } from '../database/unit-of-work.js';
import type { OrganizationId } from '../common/access/tenant-id.js';
import type { TenantRow } from './apps.repository.js';

/** One row of `android_identities`; the keys stay sealed here. */
export interface AndroidIdentityRow {
  app_id: string;
  organization_id: string;
  package_name: string;
  certificate_digests: string[];
  decryption_key_sealed: string;
  verification_key_sealed: string;
  /** The app's verdict policy (its shape is attestation's: android-policy.ts). */
  policy: Record<string, unknown>;
  created_at: Date;
  updated_at: Date;
}

/** The app of an Android package, as the tenant resolver reads it: the iOS row plus the app's iOS identity, if any. */
export interface AndroidTenantRow extends TenantRow {
  bundle_id: string | null;
  team_id: string | null;
}

const COLUMNS = `app_id, organization_id, package_name, certificate_digests, decryption_key_sealed,
  verification_key_sealed, policy, created_at, updated_at`;

/**
 * The owner of `android_identities` (the apps feature): an app's Android build and its Play
 * Integrity keys, sealed. Every method takes the organization id first, bar the SDK's lookup by
 * package name, which is how a tenant is found. Statements run in the open unit of work.
 */
/** What a write of an app's Android identity stores: its keys already sealed. */
export interface AndroidIdentityWrite {
  packageName: string;
  certificateDigests: readonly string[];
  decryptionKeySealed: string;
  verificationKeySealed: string;
  policy: object;
}

@Injectable()
export class AndroidIdentityRepository {
  constructor(private readonly uow: UnitOfWork) {}

  async find(organizationId: OrganizationId, appId: string): Promise<AndroidIdentityRow | null> {
    const rows = await queryRows<AndroidIdentityRow>(
      this.uow.manager(),
      `SELECT ${COLUMNS} FROM android_identities WHERE organization_id = $1 AND app_id = $2`,
      [organizationId, appId],
    );
    return rows[0] ?? null;
  }

  /** Creates or replaces the app's identity; a package name another app has fails with a unique violation. */
  async upsert(
    organizationId: OrganizationId,
    appId: string,
    identity: AndroidIdentityWrite,
  ): Promise<AndroidIdentityRow> {
    const rows = await queryRows<AndroidIdentityRow>(
      this.uow.manager(),
      `INSERT INTO android_identities (app_id, organization_id, package_name, certificate_digests,
                                       decryption_key_sealed, verification_key_sealed, policy)
       VALUES ($1, $2, $3, $4, $5, $6, $7)
       ON CONFLICT (app_id) DO UPDATE SET
         package_name = EXCLUDED.package_name, certificate_digests = EXCLUDED.certificate_digests,
         decryption_key_sealed = EXCLUDED.decryption_key_sealed,
         verification_key_sealed = EXCLUDED.verification_key_sealed, policy = EXCLUDED.policy, updated_at = now()
       WHERE android_identities.organization_id = EXCLUDED.organization_id
       RETURNING ${COLUMNS}`,
      [
        appId,
        organizationId,
        identity.packageName,
        identity.certificateDigests,
        identity.decryptionKeySealed,
        identity.verificationKeySealed,
        JSON.stringify(identity.policy),
      ],
    );
    return rows[0];
  }

  /** Whether there was an identity to remove. */
  async remove(organizationId: OrganizationId, appId: string): Promise<boolean> {
    const rows = await queryRows<{ app_id: string }>(
      this.uow.manager(),
      `DELETE FROM android_identities WHERE organization_id = $1 AND app_id = $2 RETURNING app_id`,
      [organizationId, appId],
    );
    return rows.length > 0;
  }

  /** The app (and its organization) whose Android build has this package name. */
  async tenantByPackage(packageName: string): Promise<AndroidTenantRow | null> {
    const rows = await queryRows<AndroidTenantRow>(
      this.uow.manager(),
      `SELECT a.id, a.app_name, a.bundle_id, a.team_id, a.organization_id, o.tier AS service_tier,
              o.period_end AS current_period_end, o.anchor_day AS billing_anchor_day, a.is_active,
              o.active AS org_active, a.jwt_configuration, a.risk_thresholds, a.require_signed_subject,
              a.subject_signing_secret
         FROM android_identities ai
         JOIN apps a ON a.id = ai.app_id
         JOIN organization_tenants o ON o.id = a.organization_id
        WHERE ai.package_name = $1`,
      [packageName],
    );
    return rows[0] ?? null;
  }

  /** The master secret the keys are sealed with, generated once and kept in `service_settings`. */
  masterSecret(): Promise<string> {
    return storedServiceSecret(this.uow.manager(), 'android_secret_key', () => randomSecret(48));
  }
}
