import { Injectable } from '@nestjs/common';
import type { OrganizationId } from '../common/access/tenant-id.js';
import { queryRows } from '../database/sql.js';
import { UnitOfWork } from '../database/unit-of-work.js';
import { RULE_COLUMNS, toStoredRule, type RuleRow } from './risk-alert-rule-row.js';
import type { AlertChannel, AlertCondition } from './risk-alert-rule.js';
import type { StoredRiskAlertRule } from './risk-alerts.dto.js';

/** A rule's fields as written. */
export interface RuleFields {
  appId: string | null;
  name: string;
  condition: AlertCondition;
  channel: AlertChannel;
  cooldownMinutes: number;
  isActive: boolean;
}

/** Who fired a rule last, after a claim: `claimedAt` when this claim won the cooldown. */
export interface CooldownClaim {
  claimedAt: Date | null;
  lastFiredAt: Date | null;
}

/**
 * The owner of `risk_alert_rules`. Every method takes the organization id first: another
 * organization's rule is as unknown as a missing one.
 */
@Injectable()
export class RiskAlertRulesRepository {
  constructor(private readonly uow: UnitOfWork) {}

  /** Oldest first; with `activeOnly`, the rules the evaluation looks at. */
  async list(organizationId: OrganizationId, options: { activeOnly?: boolean } = {}): Promise<StoredRiskAlertRule[]> {
    const rows = await this.uow.manager().query<RuleRow[]>(
      `SELECT ${RULE_COLUMNS} FROM risk_alert_rules
        WHERE organization_id = $1${options.activeOnly ? ' AND is_active' : ''} ORDER BY created_at, id`,
      [organizationId],
    );
    return rows.map(toStoredRule);
  }

  /** The rule, locked FOR UPDATE until the unit of work ends with `lock`, or null. */
  async find(
    organizationId: OrganizationId,
    id: string,
    options: { lock?: boolean } = {},
  ): Promise<StoredRiskAlertRule | null> {
    const [row] = await this.uow
      .manager()
      .query<RuleRow[]>(
        `SELECT ${RULE_COLUMNS} FROM risk_alert_rules WHERE id = $1 AND organization_id = $2${options.lock ? ' FOR UPDATE' : ''}`,
        [id, organizationId],
      );
    return row ? toStoredRule(row) : null;
  }

  async count(organizationId: OrganizationId): Promise<number> {
    const [{ count }] = await this.uow
      .manager()
      .query<{ count: number }[]>(`SELECT count(*)::int AS count FROM risk_alert_rules WHERE organization_id = $1`, [
        organizationId,
      ]);
    return count;
  }

  async insert(organizationId: OrganizationId, fields: RuleFields): Promise<StoredRiskAlertRule> {
    const [row] = await this.uow.manager().query<RuleRow[]>(
      `INSERT INTO risk_alert_rules (organization_id, app_id, name, condition_type, threshold, window_minutes,
                                     channel, cooldown_minutes, is_active)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING ${RULE_COLUMNS}`,
      [
        organizationId,
        fields.appId,
        fields.name,
        fields.condition.type,
        fields.condition.threshold,
        fields.condition.windowMinutes,
        fields.channel,
        fields.cooldownMinutes,
        fields.isActive,
      ],
    );
    return toStoredRule(row);
  }

  async update(organizationId: OrganizationId, id: string, fields: RuleFields): Promise<StoredRiskAlertRule | null> {
    const [row] = await queryRows<RuleRow>(
      this.uow.manager(),
      `UPDATE risk_alert_rules
          SET name = $3, condition_type = $4, threshold = $5, window_minutes = $6, channel = $7,
              cooldown_minutes = $8, is_active = $9, app_id = $10, updated_at = now()
        WHERE id = $1 AND organization_id = $2 RETURNING ${RULE_COLUMNS}`,
      [
        id,
        organizationId,
        fields.name,
        fields.condition.type,
        fields.condition.threshold,
        fields.condition.windowMinutes,
        fields.channel,
        fields.cooldownMinutes,
        fields.isActive,
        fields.appId,
      ],
    );
    return row ? toStoredRule(row) : null;
  }

  /** The deleted rule, or null when there was none. */
  async delete(organizationId: OrganizationId, id: string): Promise<StoredRiskAlertRule | null> {
    const [row] = await queryRows<RuleRow>(
      this.uow.manager(),
      `DELETE FROM risk_alert_rules WHERE id = $1 AND organization_id = $2 RETURNING ${RULE_COLUMNS}`,
      [id, organizationId],
    );
    return row ? toStoredRule(row) : null;
  }

  /**
   * Claims the rule's cooldown with one conditional UPDATE (of concurrent claims on any instance,
   * one wins), and says when it last fired either way.
   */
  async claimCooldown(organizationId: OrganizationId, id: string): Promise<CooldownClaim> {
    const [claim] = await this.uow.manager().query<{ claimed_at: Date | null; last_fired_at: Date | null }[]>(
      `WITH claimed AS (
         UPDATE risk_alert_rules SET last_fired_at = now()
          WHERE id = $1 AND organization_id = $2 AND is_active
            AND (last_fired_at IS NULL OR last_fired_at <= now() - make_interval(mins => cooldown_minutes))
         RETURNING last_fired_at
       )
       SELECT (SELECT last_fired_at FROM claimed) AS claimed_at,
              (SELECT last_fired_at FROM risk_alert_rules WHERE id = $1 AND organization_id = $2) AS last_fired_at`,
      [id, organizationId],
    );
    return { claimedAt: claim.claimed_at, lastFiredAt: claim.last_fired_at };
  }
}
