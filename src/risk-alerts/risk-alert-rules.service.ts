import { Injectable } from '@nestjs/common';
import type { OrgAuthContext } from '../common/access/auth-context.js';
import type { OrganizationId } from '../common/access/tenant-id.js';
import { ValidationFailedException, badRequest, notFound } from '../common/errors/app-exception.js';
import { riskAlertRuleLimitReached } from './risk-alerts.exceptions.js';
import { UnitOfWork } from '../database/unit-of-work.js';
import { AuditService } from '../audit/audit.service.js';
import { normalizeCondition, type AlertCondition, type AlertConditionInput } from './risk-alert-rule.js';
import {
  DEFAULT_COOLDOWN_MINUTES,
  type CreateRiskAlertRuleDto,
  type StoredRiskAlertRule,
  type UpdateRiskAlertRuleDto,
} from './risk-alerts.dto.js';
import { RiskAlertsService } from './risk-alerts.service.js';
import { PlanService } from '../organizations/plan.service.js';
import { AppsRepository } from '../apps/apps.repository.js';
import { RiskAlertRulesRepository } from './risk-alert-rules.repository.js';

/** Every rule is looked at for each matching device event: the count per organization is bounded. */
export const MAX_RULES_PER_ORGANIZATION = 50;

const UPDATABLE = ['name', 'condition', 'channel', 'cooldownMinutes', 'isActive', 'appId'] as const;

/**
 * An organization's risk alert rules (Admins, plans with `fraudDetection`): each change is audited
 * in its unit of work, and this instance's evaluation forgets the organization's cached rules.
 */
@Injectable()
export class RiskAlertRulesService {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly rules: RiskAlertRulesRepository,
    private readonly audit: AuditService,
    private readonly alerts: RiskAlertsService,
    private readonly plans: PlanService,
    private readonly apps: AppsRepository,
  ) {}

  /** Oldest first. */
  async list(auth: OrgAuthContext): Promise<StoredRiskAlertRule[]> {
    await this.assertPlan(auth.organizationId);
    return this.rules.list(auth.organizationId);
  }

  async get(auth: OrgAuthContext, id: string): Promise<StoredRiskAlertRule> {
    await this.assertPlan(auth.organizationId);
    const rule = await this.rules.find(auth.organizationId, id);
    if (!rule) throw notFound('Risk alert rule');
    return rule;
  }

  async create(auth: OrgAuthContext, input: CreateRiskAlertRuleDto): Promise<StoredRiskAlertRule> {
    const condition = validCondition(input.condition);
    const rule = await this.uow.run(async () => {
      // The organization lock makes the count limit exact under concurrent creations.
      await this.assertPlan(auth.organizationId, { lock: true });
      if ((await this.rules.count(auth.organizationId)) >= MAX_RULES_PER_ORGANIZATION) {
        throw riskAlertRuleLimitReached(MAX_RULES_PER_ORGANIZATION);
      }
      const appId = input.appId ?? null;
      if (appId !== null) await this.apps.assertExists(auth.organizationId, appId);
      const created = await this.rules.insert(auth.organizationId, {
        appId,
        name: input.name,
        condition,
        channel: input.channel,
        cooldownMinutes: input.cooldownMinutes ?? DEFAULT_COOLDOWN_MINUTES,
        isActive: input.isActive ?? true,
      });
      await this.record(auth, 'risk_alert_rule.created', created.id, describeRule(created));
      return created;
    });
    this.alerts.forget(auth.organizationId);
    return rule;
  }

  async update(auth: OrgAuthContext, id: string, input: UpdateRiskAlertRuleDto): Promise<StoredRiskAlertRule> {
    const fields = UPDATABLE.filter((field) => input[field] !== undefined);
    if (!fields.length) {
      throw badRequest('Give at least one field to change', { hint: `Fields: ${UPDATABLE.join(', ')}` });
    }
    const condition = input.condition ? validCondition(input.condition) : null;
    const rule = await this.uow.run(async () => {
      await this.assertPlan(auth.organizationId);
      const before = await this.rules.find(auth.organizationId, id, { lock: true });
      if (!before) throw notFound('Risk alert rule');
      if (input.appId !== undefined && input.appId !== null)
        await this.apps.assertExists(auth.organizationId, input.appId);
      const after = await this.rules.update(auth.organizationId, id, {
        name: input.name ?? before.name,
        condition: condition ?? before.condition,
        channel: input.channel ?? before.channel,
        cooldownMinutes: input.cooldownMinutes ?? before.cooldownMinutes,
        isActive: input.isActive ?? before.isActive,
        appId: input.appId === undefined ? before.appId : input.appId,
      });
      if (!after) throw notFound('Risk alert rule');
      await this.record(auth, 'risk_alert_rule.updated', id, {
        fields,
        before: describeRule(before),
        after: describeRule(after),
      });
      return after;
    });
    this.alerts.forget(auth.organizationId);
    return rule;
  }

  async remove(auth: OrgAuthContext, id: string): Promise<void> {
    await this.uow.run(async () => {
      await this.assertPlan(auth.organizationId);
      const removed = await this.rules.delete(auth.organizationId, id);
      if (!removed) throw notFound('Risk alert rule');
      await this.record(auth, 'risk_alert_rule.deleted', id, describeRule(removed));
    });
    this.alerts.forget(auth.organizationId);
  }

  /** 403 below Business: risk alerts are the `fraudDetection` feature. */
  private async assertPlan(organizationId: OrganizationId, options: { lock?: boolean } = {}) {
    await this.plans.requireFeature(
      organizationId,
      'fraudDetection',
      { message: 'Risk alerts are available from the Business plan', hint: 'Upgrade the plan to set risk alert rules' },
      { lock: options.lock },
    );
  }

  private async record(auth: OrgAuthContext, action: string, id: string, metadata: Record<string, unknown>) {
    await this.audit.record(auth, {
      organizationId: auth.organizationId,
      action,
      resourceType: 'risk_alert_rule',
      resourceId: id,
      metadata,
    });
  }
}

/** The condition with its defaults, or 422 naming the wrong fields. */
function validCondition(input: AlertConditionInput): AlertCondition {
  const result = normalizeCondition(input);
  if (Array.isArray(result)) throw new ValidationFailedException(result);
  return result;
}

function describeRule(rule: StoredRiskAlertRule): Record<string, unknown> {
  return {
    name: rule.name,
    appId: rule.appId,
    condition: rule.condition,
    channel: rule.channel,
    cooldownMinutes: rule.cooldownMinutes,
    isActive: rule.isActive,
  };
}
