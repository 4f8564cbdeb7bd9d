import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';
import type { OrgAuthContext } from '../common/access/auth-context.js';
import {
  appLimitReached,
  appNotFound,
  duplicateApp,
  inactiveAppCannotBePrimary,
  lastApp,
  primaryCannotBeDeactivated,
  subjectSecretMissing,
} from './apps.exceptions.js';
import { AuditService } from '../audit/audit.service.js';
import { isUniqueViolation } from '../database/unique-violation.js';
import {
  App,
  DEFAULT_JWT_CONFIGURATION,
  DEFAULT_RISK_THRESHOLDS,
  jwtConfigurationOf,
  riskThresholdsOf,
} from './app.entity.js';
import type { CreateAppDto, UpdateAppDto } from './apps.dto.js';
import { announceRevocation } from '../devices/deny-set.js';
import { generateSubjectSecret } from './subject-secret.js';
import { TenantResolver } from './tenant-resolver.js';
import { OrganizationsService } from '../organizations/organizations.service.js';
import { PlanService } from '../organizations/plan.service.js';

@Injectable()
export class AppsService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly audit: AuditService,
    private readonly tenants: TenantResolver,
    private readonly plans: PlanService,
    private readonly organizations: OrganizationsService,
  ) {}

  /** Primary first, then by name. */
  list(auth: OrgAuthContext): Promise<App[]> {
    return this.dataSource.getRepository(App).find({
      where: { organizationId: auth.organizationId },
      order: { isPrimary: 'DESC', appName: 'ASC', createdAt: 'ASC' },
    });
  }

  async get(auth: OrgAuthContext, id: string): Promise<App> {
    const app = await this.dataSource.getRepository(App).findOneBy({ id, organizationId: auth.organizationId });
    if (!app) throw appNotFound();
    return app;
  }

  async create(auth: OrgAuthContext, input: CreateAppDto): Promise<App> {
    return this.change(auth, async (manager) => {
      const { maxApps } = (await this.plans.planOf(auth.organizationId, { manager, lock: true })).limits;
      const count = await manager.countBy(App, { organizationId: auth.organizationId });
      if (maxApps !== null && count >= maxApps) {
        throw appLimitReached(maxApps);
      }
      const app = manager.create(App, {
        organizationId: auth.organizationId,
        appName: input.appName,
        bundleId: input.bundleId,
        teamId: input.teamId,
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
      });
      try {
        await manager.save(app);
      } catch (error) {
        if (isUniqueViolation(error)) {
          throw duplicateApp();
        }
        throw error;
      }
      // Asked for, or the organization has no primary yet (its first app, or none active was left).
      await this.settlePrimary(manager, auth.organizationId, [app], input.isPrimary ? app : undefined);
      return { app, action: 'app.created', metadata: { bundleId: app.bundleId, teamId: app.teamId } };
    });
  }

  async update(auth: OrgAuthContext, id: string, input: UpdateAppDto): Promise<App> {
    return this.change(auth, async (manager) => {
      const app = await this.lock(manager, auth, id);
      if (input.isActive === false && app.isPrimary) throw primaryCannotBeDeactivated();
      if (input.appName !== undefined) app.appName = input.appName;
      if (input.description !== undefined) app.description = input.description;
      if (input.isActive !== undefined && input.isActive !== app.isActive) {
        app.isActive = input.isActive;
        await announceRevocation(manager, { kind: 'app', appId: app.id, state: app.isActive ? 'active' : 'inactive' });
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
      await manager.save(app);
      await this.settlePrimary(manager, auth.organizationId, [app]);
      return { app, action: 'app.updated', metadata: { fields: Object.keys(input) } };
    });
  }

  /**
   * Deleting the primary app promotes the oldest active one; with none active left the organization
   * has no primary until an app is activated or created. The last app stays.
   */
  async remove(auth: OrgAuthContext, id: string): Promise<void> {
    await this.change(auth, async (manager) => {
      const app = await this.lock(manager, auth, id);
      if ((await manager.countBy(App, { organizationId: auth.organizationId })) <= 1) {
        throw lastApp();
      }
      await manager.delete(App, { id });
      await announceRevocation(manager, { kind: 'app', appId: id, state: 'deleted' });
      await this.settlePrimary(manager, auth.organizationId, []);
      return { app, action: 'app.deleted', metadata: { bundleId: app.bundleId, teamId: app.teamId } };
    });
  }

  async setActive(auth: OrgAuthContext, id: string, active: boolean): Promise<App> {
    return this.change(auth, async (manager) => {
      const app = await this.lock(manager, auth, id);
      if (!active && app.isPrimary) throw primaryCannotBeDeactivated();
      app.isActive = active;
      await manager.save(app);
      await this.settlePrimary(manager, auth.organizationId, [app]);
      await announceRevocation(manager, { kind: 'app', appId: app.id, state: active ? 'active' : 'inactive' });
      return { app, action: active ? 'app.activated' : 'app.deactivated' };
    });
  }

  /**
   * A new subject signing secret, replacing the previous one at once (signatures made with it stop
   * verifying). The caller sees it this once.
   */
  async rotateSubjectSecret(auth: OrgAuthContext, id: string): Promise<{ app: App; secret: string }> {
    const secret = generateSubjectSecret();
    const app = await this.change(auth, async (manager) => {
      const app = await this.lock(manager, auth, id);
      app.subjectSigningSecret = secret;
      await manager.save(app);
      return { app, action: 'app.subject_secret_rotated' };
    });
    return { app, secret };
  }

  async setPrimary(auth: OrgAuthContext, id: string): Promise<App> {
    return this.change(auth, async (manager) => {
      const app = await this.lock(manager, auth, id);
      await this.settlePrimary(manager, auth.organizationId, [app], app);
      return { app, action: 'app.primary_set' };
    });
  }

  /** One transaction per change, with its audit entry; the tenant cache forgets the app after. */
  private async change(
    auth: OrgAuthContext,
    work: (manager: EntityManager) => Promise<{ app: App; action: string; metadata?: Record<string, unknown> }>,
  ): Promise<App> {
    const { app } = await this.dataSource.transaction(async (manager) => {
      const result = await work(manager);
      await this.audit.record(
        auth,
        {
          organizationId: auth.organizationId,
          action: result.action,
          resourceType: 'app',
          resourceId: result.app.id,
          metadata: result.metadata,
        },
        manager,
      );
      return result;
    });
    this.tenants.forget(app.bundleId, app.teamId);
    return app;
  }

  /**
   * Locks the organization row, then the app. Every change that can move the primary flag or
   * count the apps (create, set-primary, deactivate, delete) takes the organization lock first, so
   * they run one at a time per organization: two concurrent set-primary calls otherwise both
   * clear the flag and the second trips the one-primary unique index (a 500), and a deactivation
   * racing a primary deletion could leave an inactive primary.
   */
  private async lock(manager: EntityManager, auth: OrgAuthContext, id: string): Promise<App> {
    await this.organizations.lock(auth.organizationId, manager);
    const app = await manager
      .createQueryBuilder(App, 'app')
      .setLock('pessimistic_write')
      .where('app.id = :id AND app.organization_id = :org', { id, org: auth.organizationId })
      .getOne();
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
  private async settlePrimary(
    manager: EntityManager,
    organizationId: string,
    loaded: App[],
    candidate?: App,
  ): Promise<void> {
    if (candidate && !candidate.isActive) throw inactiveAppCannotBePrimary();
    const apps = await manager.find(App, {
      where: { organizationId },
      select: { id: true, isActive: true, isPrimary: true, createdAt: true },
      order: { createdAt: 'ASC', id: 'ASC' },
    });
    const current = apps.find((app) => app.isPrimary);
    const chosen = candidate ?? (current?.isActive ? current : apps.find((app) => app.isActive));
    if (chosen?.id !== current?.id) {
      await manager.update(App, { organizationId, isPrimary: true }, { isPrimary: false });
      if (chosen) await manager.update(App, { id: chosen.id }, { isPrimary: true });
    }
    for (const app of loaded) app.isPrimary = app.id === chosen?.id;
  }
}
