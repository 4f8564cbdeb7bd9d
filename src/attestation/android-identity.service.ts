import { Injectable } from '@nestjs/common';
import type { OrgAuthContext } from '../common/access/auth-context.js';
import { AuditService } from '../audit/audit.service.js';
import { SecretBox } from '../common/secret-box.js';
import { isUniqueViolation } from '../database/unique-violation.js';
import { UnitOfWork } from '../database/unit-of-work.js';
import {
  decryptionKeyFromBase64,
  normalizeCertificateDigest,
  verificationKeyFromBase64,
  type AndroidIdentity,
} from './play-integrity/play-integrity.js';
import { AndroidIdentityRepository, type AndroidIdentityRow } from '../apps/android-identity.repository.js';
import { AppsService, StoresAndroidIdentities, type AndroidIdentityStore } from '../apps/apps.service.js';
import { TenantResolver } from '../apps/tenant-resolver.js';
import type { PutAndroidIdentityDto } from '../apps/android-identity.dto.js';
import {
  androidIdentityNotFound,
  androidKeysRequired,
  duplicatePackage,
  invalidAndroidField,
  onlyIdentity,
} from './android-identity.exceptions.js';
import { androidPolicyOf, type StoredAndroidPolicy } from './android-policy.js';
import type { OrganizationId } from '../common/access/tenant-id.js';

/** The secret box's purpose for the Play Integrity keys: its own HKDF key, the app id as context. */
const ANDROID_KEYS_PURPOSE = 'android-integrity-keys';

/** What the dashboard sees of an app's Android identity: never the keys, only whether they are set. */
export interface AndroidIdentityResponse {
  appId: string;
  packageName: string;
  /** As stored: base64url SHA-256, the form Play reports them in. */
  certificateSha256Digests: string[];
  hasDecryptionKey: boolean;
  hasVerificationKey: boolean;
  policy: StoredAndroidPolicy;
  createdAt: string;
  updatedAt: string;
}

/** What Android attestation needs of the app: its identity with the keys opened, and its policy. */
export interface AndroidVerification {
  identity: AndroidIdentity;
  policy: StoredAndroidPolicy;
}

/**
 * An app's Android build (decision 0073): package name, signing-certificate digests, Play
 * Integrity's keys (sealed with AES-256-GCM by the service's secret box, bound to the app) and the
 * verdict policy. Admins change it; the keys are never shown again.
 */
@Injectable()
@StoresAndroidIdentities()
export class AndroidIdentityService implements AndroidIdentityStore {
  private box: Promise<SecretBox> | null = null;

  constructor(
    private readonly identities: AndroidIdentityRepository,
    private readonly apps: AppsService,
    private readonly audit: AuditService,
    private readonly tenants: TenantResolver,
    private readonly uow: UnitOfWork,
  ) {}

  async get(auth: OrgAuthContext, appId: string): Promise<AndroidIdentityResponse> {
    await this.apps.get(auth, appId);
    const row = await this.identities.find(auth.organizationId, appId);
    if (!row) throw androidIdentityNotFound();
    return responseOf(row);
  }

  async put(auth: OrgAuthContext, appId: string, input: PutAndroidIdentityDto): Promise<AndroidIdentityResponse> {
    const digests = checkedIdentity(input, '');
    const box = await this.secretBox();
    try {
      const row = await this.uow.run(async () => {
        // Locked, so a deletion of the app racing this change waits or wins: 404, never a 500.
        await this.apps.getLocked(auth, appId);
        return this.store(auth, appId, input, digests, box, '');
      });
      this.tenants.forgetApp(appId);
      this.tenants.forgetPackage(input.packageName);
      return responseOf(row);
    } catch (error) {
      if (isUniqueViolation(error)) throw duplicatePackage();
      throw error;
    }
  }

  /** The `android` object of POST /api/v1/apps: checked now, stored with the new app (AppsService.create). */
  async prepareNewAppIdentity(
    auth: OrgAuthContext,
    input: PutAndroidIdentityDto,
  ): Promise<(appId: string) => Promise<void>> {
    const digests = checkedIdentity(input, 'android.');
    const box = await this.secretBox();
    return async (appId) => {
      try {
        await this.store(auth, appId, input, digests, box, 'android.');
      } catch (error) {
        if (isUniqueViolation(error)) throw duplicatePackage();
        throw error;
      }
      // A lookup of the package before it was registered may be cached as a miss.
      await this.uow.afterCommit(() => this.tenants.forgetPackage(input.packageName));
    };
  }

  /** Creates or replaces the app's identity with its audit entry, in the open unit of work. */
  private async store(
    auth: OrgAuthContext,
    appId: string,
    input: PutAndroidIdentityDto,
    digests: string[],
    box: SecretBox,
    fieldPrefix: string,
  ): Promise<AndroidIdentityRow> {
    const existing = await this.identities.find(auth.organizationId, appId);
    if (!existing && (input.decryptionKey === undefined || input.verificationKey === undefined)) {
      throw androidKeysRequired(fieldPrefix);
    }
    const stored = await this.identities.upsert(auth.organizationId, appId, {
      packageName: input.packageName,
      certificateDigests: [...new Set(digests)],
      decryptionKeySealed:
        input.decryptionKey !== undefined ? box.seal(input.decryptionKey, appId) : existing!.decryption_key_sealed,
      verificationKeySealed:
        input.verificationKey !== undefined
          ? box.seal(input.verificationKey, appId)
          : existing!.verification_key_sealed,
      policy: androidPolicyOf({
        ...androidPolicyOf(existing?.policy),
        ...input.policy,
      }),
    });
    await this.audit.record(auth, {
      organizationId: auth.organizationId,
      action: existing ? 'app.android_updated' : 'app.android_created',
      resourceType: 'app',
      resourceId: appId,
      metadata: {
        packageName: input.packageName,
        keysReplaced: input.decryptionKey !== undefined || input.verificationKey !== undefined,
      },
    });
    return stored;
  }

  /**
   * An app's Android identity may go while the app keeps its iOS one; the identity of an
   * Android-only app is its only one (409: give the app a Bundle ID and Team ID first, or delete it).
   */
  async remove(auth: OrgAuthContext, appId: string): Promise<void> {
    const app = await this.apps.get(auth, appId);
    await this.uow.run(async () => {
      // An iOS identity, once set, stays (AppsService.update): read outside this unit of work, it cannot have gone.
      if (app.bundleId === null && (await this.identities.find(auth.organizationId, appId))) {
        throw onlyIdentity();
      }
      if (!(await this.identities.remove(auth.organizationId, appId))) throw androidIdentityNotFound();
      await this.audit.record(auth, {
        organizationId: auth.organizationId,
        action: 'app.android_deleted',
        resourceType: 'app',
        resourceId: appId,
      });
    });
    this.tenants.forgetApp(appId);
  }

  /** The app's identity with its keys opened, for attestation; null when the app has no Android build. */
  async forAttestation(organizationId: OrganizationId, appId: string): Promise<AndroidVerification | null> {
    const row = await this.identities.find(organizationId, appId);
    if (!row) return null;
    const box = await this.secretBox();
    const decryption = box.open(row.decryption_key_sealed, appId);
    const verification = box.open(row.verification_key_sealed, appId);
    if (decryption === null || verification === null) {
      throw new Error(`the Android keys of app ${appId} do not open with the service's key`);
    }
    return {
      identity: {
        packageName: row.package_name,
        certificateSha256Digests: row.certificate_digests,
        decryptionKey: decryptionKeyFromBase64(decryption),
        verificationKey: verificationKeyFromBase64(verification),
      },
      policy: androidPolicyOf(row.policy),
    };
  }

  private secretBox(): Promise<SecretBox> {
    if (!this.box) {
      const box = this.identities.masterSecret().then((secret) => new SecretBox(secret, ANDROID_KEYS_PURPOSE));
      void box.catch(() => {
        if (this.box === box) this.box = null;
      });
      this.box = box;
    }
    return this.box;
  }
}

/** The certificate digests normalized, after checking the keys given; a 400 names the field under `prefix`. */
function checkedIdentity(input: PutAndroidIdentityDto, prefix: string): string[] {
  const digests = input.certificateSha256Digests.map((digest, index) => {
    try {
      return normalizeCertificateDigest(digest);
    } catch (error) {
      throw invalidAndroidField(`${prefix}certificateSha256Digests[${index}]`, (error as Error).message);
    }
  });
  if (input.decryptionKey !== undefined) {
    try {
      decryptionKeyFromBase64(input.decryptionKey);
    } catch (error) {
      throw invalidAndroidField(`${prefix}decryptionKey`, (error as Error).message);
    }
  }
  if (input.verificationKey !== undefined) {
    try {
      verificationKeyFromBase64(input.verificationKey);
    } catch {
      throw invalidAndroidField(
        `${prefix}verificationKey`,
        'must be base64 of an EC P-256 public key (DER SubjectPublicKeyInfo)',
      );
    }
  }
  return digests;
}

function responseOf(row: AndroidIdentityRow): AndroidIdentityResponse {
  return {
    appId: row.app_id,
    packageName: row.package_name,
    certificateSha256Digests: row.certificate_digests,
    hasDecryptionKey: row.decryption_key_sealed.length > 0,
    hasVerificationKey: row.verification_key_sealed.length > 0,
    policy: androidPolicyOf(row.policy),
    createdAt: new Date(row.created_at).toISOString(),
    updatedAt: new Date(row.updated_at).toISOString(),
  };
}
