import type { TierDefinition } from '../common/tiers.js';
import type { queryRows } from '../database/sql.js';
import { sqlReference } from '../database/sql.js';
import { DEFAULT_COMPLIANCE_SETTINGS, type ComplianceSettings } from './compliance-checks.js';
import { selectComplianceSettings, type SavedComplianceSettings } from './compliance.repository.js';

/** A DataSource or a transaction's EntityManager. */
type Runner = Parameters<typeof queryRows>[0];

export interface ComplianceSettingsInForce extends ComplianceSettings {
  /** When an Admin last saved the settings in force; null while they are the defaults. */
  updatedAt: Date | null;
}

/**
 * The settings in force under `plan` given what the organization saved: what an Admin saved, on
 * plans with `complianceRules`; the defaults otherwise (nothing saved, or a plan without the
 * feature, where saved settings wait for an upgrade).
 */
export function settingsInForce(
  saved: SavedComplianceSettings | null,
  plan: TierDefinition,
): ComplianceSettingsInForce {
  if (!plan.features.complianceRules || !saved || saved.maxRiskScore === null) {
    return { ...DEFAULT_COMPLIANCE_SETTINGS, updatedAt: null };
  }
  return {
    maxRiskScore: saved.maxRiskScore,
    minOsVersion: saved.minOsVersion,
    minAppVersion: saved.minAppVersion,
    blockOnJailbreak: saved.blockOnJailbreak ?? false,
    allowedCountries: saved.allowedCountries,
    updatedAt: saved.updatedAt,
  };
}

/**
 * The organization's compliance settings in force under `plan`, read on `runner`: one indexed
 * read, none without the feature. @deprecated for callers that still hold a runner (device
 * details, attestation): ask `ComplianceService.settingsInForce` in a unit of work instead.
 */
export async function complianceSettingsOf(
  runner: Runner,
  organizationId: string,
  plan: TierDefinition,
): Promise<ComplianceSettingsInForce> {
  if (!plan.features.complianceRules) return settingsInForce(null, plan);
  return settingsInForce(await selectComplianceSettings(runner, organizationId), plan);
}

/**
 * The risk score above which a device counts as high risk (`HighRiskDevice`, `device.high_risk`):
 * the organization's compliance `maxRiskScore` in force, the default on plans without
 * `complianceRules`. @deprecated with a runner, as `complianceSettingsOf`.
 */
export async function highRiskThreshold(runner: Runner, organizationId: string, plan: TierDefinition): Promise<number> {
  return (await complianceSettingsOf(runner, organizationId, plan)).maxRiskScore;
}

/**
 * The arguments of the SQL function `compliance_high_risk_threshold(organization, compliance_rules,
 * fallback)` (migration ComplianceHighRiskThreshold), the compliance feature's read model for a
 * statement of another feature that must stay one statement (the device refresh of decision 0062).
 */
/** @public for devices.repository.ts (issue 32's device group, not merged yet). */
export function highRiskThresholdInputs(plan: TierDefinition): { complianceRules: boolean; fallback: number } {
  return {
    complianceRules: plan.features.complianceRules,
    fallback: Math.trunc(DEFAULT_COMPLIANCE_SETTINGS.maxRiskScore),
  };
}

/**
 * @deprecated (decision 0070) `highRiskThreshold` spliced into another feature's statement. Kept
 * until devices.repository.ts calls `compliance_high_risk_threshold($n, …)` with
 * `highRiskThresholdInputs(plan)` instead; then removed.
 */
export function highRiskThresholdSql(organizationId: string, plan: TierDefinition): string {
  const fallback = Math.trunc(DEFAULT_COMPLIANCE_SETTINGS.maxRiskScore);
  if (!plan.features.complianceRules) return String(fallback);
  return `COALESCE((SELECT max_risk_score FROM compliance_settings
                     WHERE organization_id = ${sqlReference(organizationId)}), ${fallback})`;
}
