import type {
  AndroidIdentityRepository,
  AndroidIdentityRow,
  AndroidIdentityWrite,
  AndroidTenantRow,
} from '../../src/apps/android-identity.repository.js';
import type { OrganizationId } from '../../src/common/access/tenant-id.js';
import type { FakeAppsService } from './apps.js';

type Public<T> = { [K in keyof T]: T[K] };

/** A unique violation as PostgreSQL reports it. */
const uniqueViolation = () =>
  Object.assign(new Error('duplicate key value violates unique constraint'), { code: '23505' });

/**
 * `android_identities` in memory, joined to the apps of `apps` as the SDK's lookup by package
 * name is: a package name is one app's across organizations (a unique violation otherwise), and
 * an identity whose app was deleted names no app.
 */
export class FakeAndroidIdentities implements Public<AndroidIdentityRepository> {
  readonly rows = new Map<string, AndroidIdentityRow>();
  private readonly secret = 'android-master-secret-of-the-fake-service-settings';

  constructor(private readonly apps: FakeAppsService) {}

  find(organizationId: OrganizationId, appId: string): Promise<AndroidIdentityRow | null> {
    const row = this.rows.get(appId);
    return Promise.resolve(row && row.organization_id === organizationId ? copy(row) : null);
  }

  upsert(organizationId: OrganizationId, appId: string, identity: AndroidIdentityWrite): Promise<AndroidIdentityRow> {
    const holder = [...this.rows.values()].find((row) => row.package_name === identity.packageName);
    if (holder && holder.app_id !== appId) return Promise.reject(uniqueViolation());
    const existing = this.rows.get(appId);
    if (existing && existing.organization_id !== organizationId) {
      return Promise.reject(new Error("the fake was asked to overwrite another organization's identity"));
    }
    const now = new Date();
    const row: AndroidIdentityRow = {
      app_id: appId,
      organization_id: organizationId,
      package_name: identity.packageName,
      certificate_digests: [...identity.certificateDigests],
      decryption_key_sealed: identity.decryptionKeySealed,
      verification_key_sealed: identity.verificationKeySealed,
      // Stored as jsonb: what is read back is a copy.
      policy: JSON.parse(JSON.stringify(identity.policy)) as Record<string, unknown>,
      created_at: existing?.created_at ?? now,
      updated_at: now,
    };
    this.rows.set(appId, row);
    return Promise.resolve(copy(row));
  }

  remove(organizationId: OrganizationId, appId: string): Promise<boolean> {
    const row = this.rows.get(appId);
    if (!row || row.organization_id !== organizationId) return Promise.resolve(false);
    this.rows.delete(appId);
    return Promise.resolve(true);
  }

  tenantByPackage(packageName: string): Promise<AndroidTenantRow | null> {
    const row = [...this.rows.values()].find((candidate) => candidate.package_name === packageName);
    return Promise.resolve(row ? this.apps.tenantRowOf(row.app_id) : null);
  }

  masterSecret(): Promise<string> {
    return Promise.resolve(this.secret);
  }
}

function copy(row: AndroidIdentityRow): AndroidIdentityRow {
  return { ...row, certificate_digests: [...row.certificate_digests], policy: { ...row.policy } };
}
