import { describe, expect, it } from '@jest/globals';
import type { AppsRepository } from '../apps/apps.repository.js';
import type { AuditEntry, AuditService } from '../audit/audit.service.js';
import type { OrgAuthContext } from '../common/access/auth-context.js';
import { AppException } from '../common/errors/app-exception.js';
import type { OrganizationId } from '../common/access/tenant-id.js';
import { tierDefinition } from '../common/tiers.js';
import { featureUnavailable } from '../organizations/organizations.exceptions.js';
import type { PlanService } from '../organizations/plan.service.js';
import { FakeRiskAlertRules } from '../../test/fakes/risk-alert-rules.js';
import { FakeUnitOfWork } from '../../test/fakes/unit-of-work.js';
import { MAX_RULES_PER_ORGANIZATION, RiskAlertRulesService } from './risk-alert-rules.service.js';
import type { RiskAlertRulesRepository } from './risk-alert-rules.repository.js';
import type { RiskAlertsService } from './risk-alerts.service.js';

const ORG = 'org-a' as OrganizationId;
const OTHER = 'org-b' as OrganizationId;
const APP = 'app-1';

function auth(organizationId: OrganizationId): OrgAuthContext {
  return {
    caller: { kind: 'session', userId: 'user-1', email: 'admin@example.com', isSuperAdmin: false, role: 'admin' },
    organizationId,
    ipAddress: null,
  };
}

function world(options: { fraudDetection?: boolean } = {}) {
  const uow = new FakeUnitOfWork();
  const rules = new FakeRiskAlertRules();
  const audited: AuditEntry[] = [];
  const forgotten: string[] = [];
  const audit = { record: (_auth: unknown, entry: AuditEntry) => Promise.resolve(void audited.push(entry)) };
  const plans = {
    requireFeature: (_organizationId: string, _feature: string, refusal: { message: string; hint?: string }) =>
      options.fraudDetection === false
        ? Promise.reject(featureUnavailable(refusal.message, refusal.hint))
        : Promise.resolve(tierDefinition('business')),
  };
  const apps = {
    assertExists: (organizationId: string, appId: string) =>
      organizationId === ORG && appId === APP
        ? Promise.resolve()
        : Promise.reject(new AppException(404, 'not_found', 'App not found')),
  };
  const alerts = { forget: (organizationId: string) => void forgotten.push(organizationId) };
  const service = new RiskAlertRulesService(
    uow.asUnitOfWork(),
    rules as unknown as RiskAlertRulesRepository,
    audit as unknown as AuditService,
    alerts as unknown as RiskAlertsService,
    plans as unknown as PlanService,
    apps as unknown as AppsRepository,
  );
  return { service, rules, audited, forgotten, uow };
}

const input = {
  name: 'Too many failures',
  condition: { type: 'failed_attestations_per_app' as const, threshold: 5 },
  channel: 'email' as const,
};

describe('RiskAlertRulesService', () => {
  it('creates a rule with its defaults, audits it in the same unit of work and forgets the cached rules', async () => {
    const w = world();
    const rule = await w.service.create(auth(ORG), input);
    expect(rule).toMatchObject({ name: 'Too many failures', appId: null, isActive: true, channel: 'email' });
    expect(rule.condition.windowMinutes).not.toBeNull();
    expect(w.audited).toEqual([expect.objectContaining({ action: 'risk_alert_rule.created', resourceId: rule.id })]);
    expect(w.uow.committed).toBe(1);
    expect(w.forgotten).toEqual([ORG]);
  });

  it('refuses a rule beyond the per-organization limit, writing nothing', async () => {
    const w = world();
    for (let i = 0; i < MAX_RULES_PER_ORGANIZATION; i++) await w.service.create(auth(ORG), input);
    await expect(w.service.create(auth(ORG), input)).rejects.toMatchObject({ status: 403 });
    expect(w.rules.rules.size).toBe(MAX_RULES_PER_ORGANIZATION);
    expect(w.audited).toHaveLength(MAX_RULES_PER_ORGANIZATION);
  });

  it('refuses an app of another organization with 404', async () => {
    const w = world();
    await expect(w.service.create(auth(ORG), { ...input, appId: 'someone-elses-app' })).rejects.toMatchObject({
      status: 404,
    });
    expect(w.rules.rules.size).toBe(0);
  });

  it('is unavailable without fraudDetection', async () => {
    const w = world({ fraudDetection: false });
    await expect(w.service.list(auth(ORG))).rejects.toMatchObject({ status: 403 });
    await expect(w.service.create(auth(ORG), input)).rejects.toMatchObject({ status: 403 });
  });

  it('updates only the given fields and audits before and after; needs at least one field', async () => {
    const w = world();
    const rule = await w.service.create(auth(ORG), input);
    const updated = await w.service.update(auth(ORG), rule.id, { isActive: false });
    expect(updated).toMatchObject({ name: rule.name, channel: 'email', isActive: false });
    expect(w.audited.at(-1)).toMatchObject({
      action: 'risk_alert_rule.updated',
      metadata: { fields: ['isActive'], before: { isActive: true }, after: { isActive: false } },
    });
    await expect(w.service.update(auth(ORG), rule.id, {})).rejects.toMatchObject({ status: 400 });
  });

  it("answers 404 for another organization's rule on get, update and delete, and leaves it as it was", async () => {
    const w = world();
    const rule = await w.service.create(auth(ORG), input);
    await expect(w.service.get(auth(OTHER), rule.id)).rejects.toMatchObject({ status: 404 });
    await expect(w.service.update(auth(OTHER), rule.id, { name: 'taken over' })).rejects.toMatchObject({ status: 404 });
    await expect(w.service.remove(auth(OTHER), rule.id)).rejects.toMatchObject({ status: 404 });
    expect(await w.service.get(auth(ORG), rule.id)).toMatchObject({ name: 'Too many failures' });
  });

  it('deletes a rule with an audit entry describing it', async () => {
    const w = world();
    const rule = await w.service.create(auth(ORG), input);
    await w.service.remove(auth(ORG), rule.id);
    expect(w.rules.rules.size).toBe(0);
    expect(w.audited.at(-1)).toMatchObject({
      action: 'risk_alert_rule.deleted',
      metadata: { name: 'Too many failures' },
    });
  });
});
