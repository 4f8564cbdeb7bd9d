import { randomUUID } from 'node:crypto';
import { App } from '../../src/apps/app.entity.js';
import { appNotFound } from '../../src/apps/apps.exceptions.js';
import type { AppsService } from '../../src/apps/apps.service.js';
import type { AndroidTenantRow } from '../../src/apps/android-identity.repository.js';
import type { OrgAuthContext } from '../../src/common/access/auth-context.js';
import { trustAppId, trustOrganizationId } from '../../src/common/access/tenant-id.js';

/**
 * The apps as other features read them through AppsService: whose each app is, and its iOS
 * identity (null for an Android-only app). Another organization's app is not found, as in the
 * service; `locked` lists the apps a unit of work locked.
 */
export class FakeAppsService implements Pick<AppsService, 'get' | 'getLocked'> {
  readonly apps = new Map<string, App>();
  readonly locked: string[] = [];

  /** A new app of `organizationId`, iOS unless `bundleId` is null; returns its id. */
  add(organizationId: string, options: { bundleId?: string | null } = {}): string {
    const id = randomUUID();
    const bundleId = options.bundleId === undefined ? `com.example.app${this.apps.size + 1}` : options.bundleId;
    const app = Object.assign(new App(), {
      id,
      organizationId,
      appName: `App ${this.apps.size + 1}`,
      bundleId,
      teamId: bundleId === null ? null : 'ABCDE12345',
      description: '',
      isActive: true,
      isPrimary: this.apps.size === 0,
      jwtConfiguration: {},
      riskThresholds: {},
      analyticsEnabled: true,
      webhookEnabled: true,
      requireSignedSubject: false,
      subjectSigningSecret: null,
      debugTokensEnabled: true,
      createdAt: new Date(),
      updatedAt: new Date(),
    });
    this.apps.set(id, app);
    return id;
  }

  /** The app is deleted by another request. */
  delete(appId: string): void {
    this.apps.delete(appId);
  }

  get(auth: OrgAuthContext, id: string): Promise<App> {
    const app = this.apps.get(id);
    if (!app || app.organizationId !== auth.organizationId) return Promise.reject(appNotFound());
    return Promise.resolve(Object.assign(new App(), app));
  }

  getLocked(auth: OrgAuthContext, id: string): Promise<App> {
    this.locked.push(id);
    return this.get(auth, id);
  }

  /** The app and its organization as the SDK's lookup by package name reads them; null when deleted. */
  tenantRowOf(appId: string): AndroidTenantRow | null {
    const app = this.apps.get(appId);
    if (!app) return null;
    return {
      id: trustAppId(app.id),
      app_name: app.appName,
      bundle_id: app.bundleId,
      team_id: app.teamId,
      organization_id: trustOrganizationId(app.organizationId),
      service_tier: 'professional',
      current_period_end: null,
      billing_anchor_day: null,
      is_active: app.isActive,
      org_active: true,
      jwt_configuration: app.jwtConfiguration,
      risk_thresholds: app.riskThresholds,
      require_signed_subject: app.requireSignedSubject,
      subject_signing_secret: app.subjectSigningSecret,
    };
  }

  asAppsService(): AppsService {
    return this as unknown as AppsService;
  }
}
