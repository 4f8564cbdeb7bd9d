import type { StoredRiskAlertRule } from './risk-alerts.dto.js';
import type { AlertChannel, ConditionType } from './risk-alert-rule.js';

/** The columns `toStoredRule` reads. */
export const RULE_COLUMNS = `id, organization_id, app_id, name, condition_type, threshold, window_minutes, channel,
  cooldown_minutes, is_active, last_fired_at, created_at, updated_at`;

export interface RuleRow {
  id: string;
  organization_id: string;
  app_id: string | null;
  name: string;
  condition_type: ConditionType;
  threshold: number;
  window_minutes: number | null;
  channel: AlertChannel;
  cooldown_minutes: number;
  is_active: boolean;
  last_fired_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

export function toStoredRule(row: RuleRow): StoredRiskAlertRule {
  return {
    id: row.id,
    organizationId: row.organization_id,
    appId: row.app_id,
    name: row.name,
    condition: { type: row.condition_type, threshold: row.threshold, windowMinutes: row.window_minutes },
    channel: row.channel,
    cooldownMinutes: row.cooldown_minutes,
    isActive: row.is_active,
    lastFiredAt: row.last_fired_at,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}
