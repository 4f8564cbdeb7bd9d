import { Injectable } from '@nestjs/common';
import { ExpiringCache } from '../common/expiring-cache.js';
import type { AppId, OrganizationId } from '../common/access/tenant-id.js';
import type { JwtConfiguration, RiskThresholds } from './app.entity.js';
import { jwtConfigurationOf, riskThresholdsOf } from './app.entity.js';
import { AppsRepository, type TenantRow } from './apps.repository.js';
import { AndroidIdentityRepository, type AndroidTenantRow } from './android-identity.repository.js';

/** What SDK routes need of the app their identity headers name. */
export interface Tenant {
  appId: AppId;
  appName: string;
  /** Null with teamId for an Android-only app (named by `X-Package-Name`). */
  bundleId: string | null;
  teamId: string | null;
  organizationId: OrganizationId;
  serviceTier: string;
  currentPeriodEnd: Date | null;
  /** The day of month the organization's paid cycle renews on, when known. */
  billingAnchorDay: number | null;
  appActive: boolean;
  organizationActive: boolean;
  jwtConfiguration: JwtConfiguration;
  riskThresholds: RiskThresholds;
  /** Accept `subjectId` only signed with `subjectSigningSecret` (docs/security.md, Subject binding). */
  requireSignedSubject: boolean;
  subjectSigningSecret: string | null;
  /** Set when the app was named by `X-Package-Name` (an Android build). */
  packageName?: string;
}

/** Apps change rarely and SDK traffic is heavy: lookups are cached briefly per instance. */
const TTL_MS = 30_000;
/** Apps found, at most; the oldest is forgotten first. */
export const MAX_ENTRIES = 50_000;
/**
 * Identities that named no app, at most, kept apart from the apps found: anyone can send any
 * header, so a flood of made-up identities only ever pushes out other made-up identities, never
 * a live app (whose every request would then read the database again).
 */
export const MAX_MISSES = 10_000;

/**
 * The longest identity headers that can name an app: apps are created with a Bundle ID of at most
 * 155 characters and a Team ID of 10 (64 allowed here, with room), and a package name of at most
 * 150. Longer ones are never looked up, so no caller can make a lookup or a cached miss of them.
 */
export const IDENTITY_HEADER_LIMITS = { bundleId: 155, teamId: 64, packageName: 150 } as const;

/** Whether an `X-Package-Name` is short enough to name an app. */
export function packageNameFits(packageName: string): boolean {
  return packageName.length <= IDENTITY_HEADER_LIMITS.packageName;
}

/** Whether iOS identity headers are short enough to name an app. */
export function iosIdentityFits(bundleId: string, teamId: string): boolean {
  return bundleId.length <= IDENTITY_HEADER_LIMITS.bundleId && teamId.length <= IDENTITY_HEADER_LIMITS.teamId;
}

/**
 * The cache keys of the two ways to name an app, each in a namespace of its own: no pair of iOS
 * headers writes the entry of a package name (`X-Bundle-ID: android` with a package as team id
 * once cached a miss under an Android app's key, shutting its SDK calls out for 30 s). Header
 * values hold no newline, so the first line is always the namespace.
 */
const iosKey = (bundleId: string, teamId: string) => `ios\n${bundleId}\n${teamId}`;
const androidKey = (packageName: string) => `android\n${packageName}`;

/**
 * Resolves `X-Bundle-ID` + `X-Team-ID` to the app and its organization. Changes made through
 * this instance are seen at once (`forget`); deactivations and deletions reach the other
 * instances through the token revocation notifications (`forgetApp`), other changes within 30
 * seconds.
 */
@Injectable()
export class TenantResolver {
  private readonly cache = new ExpiringCache<Tenant>(MAX_ENTRIES, Date.now);
  /** The identities that named no app, until they may be looked up again. */
  private readonly misses = new ExpiringCache<true>(MAX_MISSES, Date.now);
  /** Moves on every forget: a lookup that started before it must not cache what it read. */
  private generation = 0;

  constructor(
    private readonly apps: AppsRepository,
    private readonly android: AndroidIdentityRepository,
  ) {}

  /** The app whose Android build has `packageName` (`X-Package-Name`), cached like `resolve`. */
  resolveAndroid(packageName: string): Promise<Tenant | null> {
    if (!packageNameFits(packageName)) return Promise.resolve(null);
    return this.cached(androidKey(packageName), async () => {
      const row = await this.android.tenantByPackage(packageName);
      return row ? androidTenantOf(row, packageName) : null;
    });
  }

  resolve(bundleId: string, teamId: string): Promise<Tenant | null> {
    if (!iosIdentityFits(bundleId, teamId)) return Promise.resolve(null);
    return this.cached(iosKey(bundleId, teamId), () => this.lookup(bundleId, teamId));
  }

  /** The entry under `key` while fresh, else what `load` reads, cached unless a forget came meanwhile. */
  private async cached(key: string, load: () => Promise<Tenant | null>): Promise<Tenant | null> {
    const cached = this.cache.get(key);
    if (cached) return cached;
    if (this.misses.get(key)) return null;
    const generation = this.generation;
    const tenant = await load();
    if (generation !== this.generation) return tenant;
    if (tenant) {
      this.misses.delete(key);
      this.cache.set(key, tenant, TTL_MS);
    } else {
      this.cache.delete(key);
      this.misses.set(key, true, TTL_MS);
    }
    return tenant;
  }

  forget(bundleId: string, teamId: string): void {
    this.generation++;
    this.cache.delete(iosKey(bundleId, teamId));
    this.misses.delete(iosKey(bundleId, teamId));
  }

  /** Drops what `X-Package-Name: packageName` was last resolved to, a miss included (a package just registered). */
  forgetPackage(packageName: string): void {
    this.generation++;
    this.cache.delete(androidKey(packageName));
    this.misses.delete(androidKey(packageName));
  }

  /** Drops the cached app with this id, whatever identity headers it was looked up by. */
  forgetApp(appId: string): void {
    this.generation++;
    this.cache.deleteWhere((tenant) => tenant.appId === appId);
  }

  /** Drops every cached app of an organization (its tier or state changed). */
  forgetAll(): void {
    this.generation++;
    this.cache.clear();
    this.misses.clear();
  }

  /** The app and its organization as they are now, past the cache (diagnostics). */
  async lookup(bundleId: string, teamId: string): Promise<Tenant | null> {
    if (!iosIdentityFits(bundleId, teamId)) return null;
    const row = await this.apps.tenantOf(bundleId, teamId);
    return row ? tenantOf(row, bundleId, teamId) : null;
  }
}

/** The tenant of an app row, named by its iOS identity. */
function tenantOf(row: TenantRow, bundleId: string | null, teamId: string | null): Tenant {
  return {
    appId: row.id,
    appName: row.app_name,
    bundleId,
    teamId,
    organizationId: row.organization_id,
    serviceTier: row.service_tier,
    currentPeriodEnd: row.current_period_end,
    billingAnchorDay: row.billing_anchor_day,
    appActive: row.is_active,
    organizationActive: row.org_active,
    jwtConfiguration: jwtConfigurationOf({ jwtConfiguration: row.jwt_configuration }),
    riskThresholds: riskThresholdsOf({ riskThresholds: row.risk_thresholds }),
    requireSignedSubject: row.require_signed_subject,
    subjectSigningSecret: row.subject_signing_secret,
  };
}

/** The tenant of an Android package: its app's tenant, named also by the package. */
function androidTenantOf(row: AndroidTenantRow, packageName: string): Tenant {
  return { ...tenantOf(row, row.bundle_id, row.team_id), packageName };
}
