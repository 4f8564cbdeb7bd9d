import { Injectable, type OnModuleInit } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import { discovered } from '../common/discovery/discovered.js';
import type { OrgAuthContext } from '../common/access/auth-context.js';
import type { OrganizationId } from '../common/access/tenant-id.js';
import {
  appLimitReached,
  appNotFound,
  duplicateApp,
  inactiveAppCannotBePrimary,
  iosIdentityImmutable,
  lastApp,
  primaryCannotBeDeactivated,
  subjectSecretMissing,
} from './apps.exceptions.js';
import { AuditService } from '../audit/audit.service.js';
import { isUniqueViolation } from '../database/unique-violation.js';
import { UnitOfWork } from '../database/unit-of-work.js';
import {
  type App,
  DEFAULT_JWT_CONFIGURATION,
  DEFAULT_RISK_THRESHOLDS,
  jwtConfigurationOf,
  riskThresholdsOf,
} from './app.entity.js';
import type { PutAndroidIdentityDto } from './android-identity.dto.js';
import type { CreateAppDto, UpdateAppDto } from './apps.dto.js';
import { TokenRevocationsRepository } from '../devices/token-revocations.repository.js';
import { AppsRepository } from './apps.repository.js';
import { generateSubjectSecret } from './subject-secret.js';
import { TenantResolver } from './tenant-resolver.js';
import { OrganizationsService } from '../organizations/organizations.service.js';
import { PlanService } from '../organizations/plan.service.js';

/**
 * What stores the `android` object of POST /api/v1/apps (decision 0073): attestation's
 * AndroidIdentityService, which holds the key box and the checks apps may not import, marks itself
 * `@StoresAndroidIdentities()` and is found when this module starts. Two fail the start.
 */
export interface AndroidIdentityStore {
  /**
   * Checks the identity's fields (a 400 naming `android.<field>`) before any unit of work opens, and
   * gives back the write that stores it, with its audit entry, for a new app in the caller's unit of
   * work; that write refuses a first identity without both keys (400) and a package name another app
   * has (409), and the app goes with it.
   */
  prepareNewAppIdentity(auth: OrgAuthContext, input: PutAndroidIdentityDto): Promise<(appId: string) => Promise<void>>;
}

/** Marks the provider that stores a new app's Android identity (an `AndroidIdentityStore`). */
export const StoresAndroidIdentities = DiscoveryService.createDecorator<void>();

@Injectable()
export class AppsService implements OnModuleInit {
  private androidStore: AndroidIdentityStore | null = null;

  constructor(
    private readonly uow: UnitOfWork,
    private readonly apps: AppsRepository,
    private readonly revocations: TokenRevocationsRepository,
    private readonly audit: AuditService,
    private readonly tenants: TenantResolver,
    private readonly plans: PlanService,
    private readonly organizations: OrganizationsService,
    private readonly discovery: DiscoveryService,
  ) {}

  onModuleInit(): void {
    const stores = discovered<AndroidIdentityStore, void>(this.discovery, StoresAndroidIdentities);
    if (stores.length > 1) throw new Error('More than one provider stores Android identities');
    this.androidStore = stores[0]?.instance ?? null;
  }

  /** Primary first, then by name. */
  list(auth: OrgAuthContext): Promise<App[]> {
    return this.apps.list(auth.organizationId);
  }

  async get(auth: OrgAuthContext, id: string): Promise<App> {
    const app = await this.apps.get(auth.organizationId, id);
    if (!app) throw appNotFound();
    return app;
  }

  /**
   * The organization's app, locked until the open unit of work ends, in the order every app
   * change locks (`lock`: the organization, then the app): what another feature writes for the app
   * in that unit of work cannot race the app's deletion (404, never a foreign key error), nor
   * deadlock with it (its audit entry's key check waits on the organization row a deletion holds).
   */
  getLocked(auth: OrgAuthContext, id: string): Promise<App> {
    return this.lock(auth, id);
  }

  /**
   * An app with its iOS identity, its Android one (`input.android`), or both, written in one unit
   * of work: a refused Android identity leaves no app behind.
   */
  async create(auth: OrgAuthContext, input: CreateAppDto): Promise<App> {
    let storeAndroid: ((appId: string) => Promise<void>) | null = null;
    if (input.android) {
      if (!this.androidStore) throw new Error('No provider stores Android identities');
      storeAndroid = await this.androidStore.prepareNewAppIdentity(auth, input.android);
    }
    return this.change(auth, async () => {
      const { maxApps } = (await this.plans.planOf(auth.organizationId, { lock: true })).limits;
      const count = await this.apps.count(auth.organizationId);
      if (maxApps !== null && count >= maxApps) {
        throw appLimitReached(maxApps);
      }
      const fields = {
        appName: input.appName,
        bundleId: input.bundleId ?? null,
        teamId: input.teamId ?? null,
        description: input.description ?? '',
        isActive: true,
        isPrimary: false,
        jwtConfiguration: { ...DEFAULT_JWT_CONFIGURATION, ...input.jwtConfiguration },
        riskThresholds: { ...DEFAULT_RISK_THRESHOLDS, ...input.riskThresholds },
        analyticsEnabled: true,
        webhookEnabled: true,
        requireSignedSubject: false,
        subjectSigningSecret: null,
        debugTokensEnabled: true,
      };
      let app: App;
      try {
        app = await this.apps.insert(auth.organizationId, fields);
      } catch (error) {
        if (isUniqueViolation(error)) {
          throw duplicateApp();
        }
        throw error;
      }
      if (storeAndroid) await storeAndroid(app.id);
      // Asked for, or the organization has no primary yet (its first app, or none active was left).
      await this.settlePrimary(auth.organizationId, [app], input.isPrimary ? app : undefined);
      return {
        app,
        action: 'app.created',
        metadata: { bundleId: app.bundleId, teamId: app.teamId, packageName: input.android?.packageName ?? null },
      };
    });
  }

  async update(auth: OrgAuthContext, id: string, input: UpdateAppDto): Promise<App> {
    return this.change(auth, async () => {
      const app = await this.lock(auth, id);
      if (input.isActive === false && app.isPrimary) throw primaryCannotBeDeactivated();
      if (input.bundleId !== undefined && input.teamId !== undefined) {
        // Set once: an Android-only app may be given an iOS identity; a set one stays.
        if (app.bundleId === null) {
          app.bundleId = input.bundleId;
          app.teamId = input.teamId;
        } else if (app.bundleId !== input.bundleId || app.teamId !== input.teamId) {
          throw iosIdentityImmutable();
        }
      }
      if (input.appName !== undefined) app.appName = input.appName;
      if (input.description !== undefined) app.description = input.description;
      if (input.isActive !== undefined && input.isActive !== app.isActive) {
        app.isActive = input.isActive;
        await this.revocations.announce({ kind: 'app', appId: app.id, state: app.isActive ? 'active' : 'inactive' });
      }
      if (input.analyticsEnabled !== undefined) app.analyticsEnabled = input.analyticsEnabled;
      if (input.webhookEnabled !== undefined) app.webhookEnabled = input.webhookEnabled;
      if (input.debugTokensEnabled !== undefined) app.debugTokensEnabled = input.debugTokensEnabled;
      if (input.jwtConfiguration) app.jwtConfiguration = { ...jwtConfigurationOf(app), ...input.jwtConfiguration };
      if (input.riskThresholds) app.riskThresholds = { ...riskThresholdsOf(app), ...input.riskThresholds };
      if (input.requireSignedSubject !== undefined) {
        if (input.requireSignedSubject && !app.subjectSigningSecret) {
          throw subjectSecretMissing(app.id);
        }
        app.requireSignedSubject = input.requireSignedSubject;
      }
      try {
        await this.apps.save(auth.organizationId, app);
      } catch (error) {
        if (isUniqueViolation(error)) throw duplicateApp();
        throw error;
      }
      await this.settlePrimary(auth.organizationId, [app]);
      return { app, action: 'app.updated', metadata: { fields: Object.keys(input) } };
    });
  }

  /**
   * Deleting the primary app promotes the oldest active one; with none active left the organization
   * has no primary until an app is activated or created. The last app stays.
   */
  async remove(auth: OrgAuthContext, id: string): Promise<void> {
    await this.change(auth, async () => {
      const app = await this.lock(auth, id);
      if ((await this.apps.count(auth.organizationId)) <= 1) {
        throw lastApp();
      }
      await this.apps.delete(auth.organizationId, id);
      await this.revocations.announce({ kind: 'app', appId: id, state: 'deleted' });
      await this.settlePrimary(auth.organizationId, []);
      return { app, action: 'app.deleted', metadata: { bundleId: app.bundleId, teamId: app.teamId } };
    });
  }

  async setActive(auth: OrgAuthContext, id: string, active: boolean): Promise<App> {
    return this.change(auth, async () => {
      const app = await this.lock(auth, id);
      if (!active && app.isPrimary) throw primaryCannotBeDeactivated();
      app.isActive = active;
      await this.apps.save(auth.organizationId, app);
      await this.settlePrimary(auth.organizationId, [app]);
      await this.revocations.announce({ kind: 'app', appId: app.id, state: active ? 'active' : 'inactive' });
      return { app, action: active ? 'app.activated' : 'app.deactivated' };
    });
  }

  /**
   * A new subject signing secret, replacing the previous one at once (signatures made with it stop
   * verifying). The caller sees it this once.
   */
  async rotateSubjectSecret(auth: OrgAuthContext, id: string): Promise<{ app: App; secret: string }> {
    const secret = generateSubjectSecret();
    const app = await this.change(auth, async () => {
      const app = await this.lock(auth, id);
      app.subjectSigningSecret = secret;
      await this.apps.save(auth.organizationId, app);
      return { app, action: 'app.subject_secret_rotated' };
    });
    return { app, secret };
  }

  async setPrimary(auth: OrgAuthContext, id: string): Promise<App> {
    return this.change(auth, async () => {
      const app = await this.lock(auth, id);
      await this.settlePrimary(auth.organizationId, [app], app);
      return { app, action: 'app.primary_set' };
    });
  }

  /** One unit of work per change, with its audit entry; the tenant cache forgets the app after. */
  private async change(
    auth: OrgAuthContext,
    work: () => Promise<{ app: App; action: string; metadata?: Record<string, unknown> }>,
  ): Promise<App> {
    const { app } = await this.uow.run(async () => {
      const result = await work();
      await this.audit.record(auth, {
        organizationId: auth.organizationId,
        action: result.action,
        resourceType: 'app',
        resourceId: result.app.id,
        metadata: result.metadata,
      });
      return result;
    });
    // Every entry naming the app (its iOS headers, its package name) goes, and the iOS headers'
    // entry even if it was a miss (an iOS identity just set): an app with both identities cached
    // by its package name kept its old thresholds, subject secret and token settings for 30 s.
    if (app.bundleId !== null && app.teamId !== null) this.tenants.forget(app.bundleId, app.teamId);
    this.tenants.forgetApp(app.id);
    return app;
  }

  /**
   * Locks the organization row, then the app. Every change that can move the primary flag or
   * count the apps (create, set-primary, deactivate, delete) takes the organization lock first, so
   * they run one at a time per organization: two concurrent set-primary calls otherwise both
   * clear the flag and the second trips the one-primary unique index (a 500), and a deactivation
   * racing a primary deletion could leave an inactive primary.
   */
  private async lock(auth: OrgAuthContext, id: string): Promise<App> {
    await this.organizations.lock(auth.organizationId);
    const app = await this.apps.lock(auth.organizationId, id);
    if (!app) throw appNotFound();
    return app;
  }

  /**
   * The one rule of the primary flag, run by every change that can move it or take an app out of
   * service (create, update, activate, deactivate, set-primary, delete): only an active app is
   * primary, and an organization with an active app has exactly one primary. `candidate` asks for
   * that app (403 `app_inactive` when it is inactive); otherwise an active primary stays, and else
   * the oldest active app takes the flag, or none does when no app is active. `loaded` are the
   * entities the caller holds, whose `isPrimary` is brought in line. Runs under the organization
   * lock (`lock`), after the change is saved.
   */
  private async settlePrimary(organizationId: OrganizationId, loaded: App[], candidate?: App): Promise<void> {
    if (candidate && !candidate.isActive) throw inactiveAppCannotBePrimary();
    const apps = await this.apps.primaryStates(organizationId);
    const current = apps.find((app) => app.isPrimary);
    const chosen = candidate ?? (current?.isActive ? current : apps.find((app) => app.isActive));
    if (chosen?.id !== current?.id) await this.apps.setPrimary(organizationId, chosen?.id ?? null);
    for (const app of loaded) app.isPrimary = app.id === chosen?.id;
  }
}
