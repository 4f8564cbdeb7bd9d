import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';
import type { OrgAuthContext } from '../common/access/auth-context.js';
import { ValidationFailedException, badRequest, notFound } from '../common/errors/app-exception.js';
import { riskAlertRuleLimitReached } from './risk-alerts.exceptions.js';
import { queryRows } from '../database/sql.js';
import { AuditService } from '../audit/audit.service.js';
import { RULE_COLUMNS, toStoredRule, type RuleRow } from './risk-alert-rule-row.js';
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

/** Every rule is looked at for each matching device event: the count per organization is bounded. */
export const MAX_RULES_PER_ORGANIZATION = 50;

const UPDATABLE = ['name', 'condition', 'channel', 'cooldownMinutes', 'isActive', 'appId'] as const;

/**
 * An organization's risk alert rules (Admins, plans with `fraudDetection`): each change is audited
 * in its transaction, and this instance's evaluation forgets the organization's cached rules.
 */
@Injectable()
export class RiskAlertRulesService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly audit: AuditService,
    private readonly alerts: RiskAlertsService,
    private readonly plans: PlanService,
    private readonly apps: AppsRepository,
  ) {}

  /** Oldest first. */
  async list(auth: OrgAuthContext): Promise<StoredRiskAlertRule[]> {
    await this.assertPlan(this.dataSource.manager, auth.organizationId);
    const rows = await this.dataSource.query<RuleRow[]>(
      `SELECT ${RULE_COLUMNS} FROM risk_alert_rules WHERE organization_id = $1 ORDER BY created_at, id`,
      [auth.organizationId],
    );
    return rows.map(toStoredRule);
  }

  async get(auth: OrgAuthContext, id: string): Promise<StoredRiskAlertRule> {
    await this.assertPlan(this.dataSource.manager, auth.organizationId);
    const [row] = await this.dataSource.query<RuleRow[]>(
      `SELECT ${RULE_COLUMNS} FROM risk_alert_rules WHERE id = $1 AND organization_id = $2`,
      [id, auth.organizationId],
    );
    if (!row) throw notFound('Risk alert rule');
    return toStoredRule(row);
  }

  async create(auth: OrgAuthContext, input: CreateRiskAlertRuleDto): Promise<StoredRiskAlertRule> {
    const condition = validCondition(input.condition);
    const rule = await this.dataSource.transaction(async (manager) => {
      // The organization lock makes the count limit exact under concurrent creations.
      await this.assertPlan(manager, auth.organizationId, { lock: true });
      const [{ count }] = await manager.query<{ count: number }[]>(
        `SELECT count(*)::int AS count FROM risk_alert_rules WHERE organization_id = $1`,
        [auth.organizationId],
      );
      if (count >= MAX_RULES_PER_ORGANIZATION) {
        throw riskAlertRuleLimitReached(MAX_RULES_PER_ORGANIZATION);
      }
      const appId = input.appId ?? null;
      if (appId !== null) await this.apps.assertExists(auth.organizationId, appId, { manager });
      const [row] = await manager.query<RuleRow[]>(
        `INSERT INTO risk_alert_rules (organization_id, app_id, name, condition_type, threshold, window_minutes,
                                       channel, cooldown_minutes, is_active)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING ${RULE_COLUMNS}`,
        [
          auth.organizationId,
          appId,
          input.name,
          condition.type,
          condition.threshold,
          condition.windowMinutes,
          input.channel,
          input.cooldownMinutes ?? DEFAULT_COOLDOWN_MINUTES,
          input.isActive ?? true,
        ],
      );
      const created = toStoredRule(row);
      await this.record(manager, auth, 'risk_alert_rule.created', created.id, describeRule(created));
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
    const rule = await this.dataSource.transaction(async (manager) => {
      await this.assertPlan(manager, auth.organizationId);
      const [row] = await manager.query<RuleRow[]>(
        `SELECT ${RULE_COLUMNS} FROM risk_alert_rules WHERE id = $1 AND organization_id = $2 FOR UPDATE`,
        [id, auth.organizationId],
      );
      if (!row) throw notFound('Risk alert rule');
      const before = toStoredRule(row);
      if (input.appId !== undefined && input.appId !== null)
        await this.apps.assertExists(auth.organizationId, input.appId, { manager });
      const next = {
        name: input.name ?? before.name,
        condition: condition ?? before.condition,
        channel: input.channel ?? before.channel,
        cooldownMinutes: input.cooldownMinutes ?? before.cooldownMinutes,
        isActive: input.isActive ?? before.isActive,
        appId: input.appId === undefined ? before.appId : input.appId,
      };
      const [updated] = await queryRows<RuleRow>(
        manager,
        `UPDATE risk_alert_rules
            SET name = $3, condition_type = $4, threshold = $5, window_minutes = $6, channel = $7,
                cooldown_minutes = $8, is_active = $9, app_id = $10, updated_at = now()
          WHERE id = $1 AND organization_id = $2 RETURNING ${RULE_COLUMNS}`,
        [
          id,
          auth.organizationId,
          next.name,
          next.condition.type,
          next.condition.threshold,
          next.condition.windowMinutes,
          next.channel,
          next.cooldownMinutes,
          next.isActive,
          next.appId,
        ],
      );
      const after = toStoredRule(updated);
      await this.record(manager, auth, 'risk_alert_rule.updated', id, {
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
    await this.dataSource.transaction(async (manager) => {
      await this.assertPlan(manager, auth.organizationId);
      const [row] = await queryRows<RuleRow>(
        manager,
        `DELETE FROM risk_alert_rules WHERE id = $1 AND organization_id = $2 RETURNING ${RULE_COLUMNS}`,
        [id, auth.organizationId],
      );
      if (!row) throw notFound('Risk alert rule');
      await this.record(manager, auth, 'risk_alert_rule.deleted', id, describeRule(toStoredRule(row)));
    });
    this.alerts.forget(auth.organizationId);
  }

  /** 403 below Business: risk alerts are the `fraudDetection` feature. */
  private async assertPlan(manager: EntityManager, organizationId: string, options: { lock?: boolean } = {}) {
    await this.plans.requireFeature(
      organizationId,
      'fraudDetection',
      { message: 'Risk alerts are available from the Business plan', hint: 'Upgrade the plan to set risk alert rules' },
      { manager, lock: options.lock },
    );
  }

  private async record(
    manager: EntityManager,
    auth: OrgAuthContext,
    action: string,
    id: string,
    metadata: Record<string, unknown>,
  ): Promise<void> {
    await this.audit.record(
      auth,
      { organizationId: auth.organizationId, action, resourceType: 'risk_alert_rule', resourceId: id, metadata },
      manager,
    );
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
