import type { TierDefinition } from '../common/tiers.js';
import { queryRows, sqlReference } from '../database/sql.js';
import { DEFAULT_COMPLIANCE_SETTINGS, type ComplianceSettings } from './compliance-checks.js';

/** A DataSource or a transaction's EntityManager. */
type Runner = Parameters<typeof queryRows>[0];

export interface ComplianceSettingsInForce extends ComplianceSettings {
  /** When an Admin last saved the settings in force; null while they are the defaults. */
  updatedAt: Date | null;
}

interface SettingsRow {
  max_risk_score: number | null;
  min_os_version: string | null;
  min_app_version: string | null;
  block_on_jailbreak: boolean | null;
  allowed_countries: string[] | null;
  updated_at: Date | null;
}

/**
 * The organization's compliance settings in force under `plan` (PlanService, or the tier the
 * caller already holds): what an Admin saved, on plans with `complianceRules`; the defaults
 * otherwise (no row yet, or a plan without the feature, where saved settings wait for an
 * upgrade). One indexed read, none without the feature; `runner` may be the caller's transaction.
 */
export async function complianceSettingsOf(
  runner: Runner,
  organizationId: string,
  plan: TierDefinition,
): Promise<ComplianceSettingsInForce> {
  if (!plan.features.complianceRules) return { ...DEFAULT_COMPLIANCE_SETTINGS, updatedAt: null };
  const [row] = await queryRows<SettingsRow>(
    runner,
    `SELECT max_risk_score, min_os_version, min_app_version, block_on_jailbreak, allowed_countries, updated_at
       FROM compliance_settings WHERE organization_id = $1`,
    [organizationId],
  );
  if (!row || row.max_risk_score === null) {
    return { ...DEFAULT_COMPLIANCE_SETTINGS, updatedAt: null };
  }
  return {
    maxRiskScore: row.max_risk_score,
    minOsVersion: row.min_os_version,
    minAppVersion: row.min_app_version,
    blockOnJailbreak: row.block_on_jailbreak ?? false,
    allowedCountries: row.allowed_countries,
    updatedAt: row.updated_at,
  };
}

/**
 * The risk score above which a device counts as high risk (`HighRiskDevice`, `device.high_risk`):
 * the organization's compliance `maxRiskScore` in force, the default on plans without
 * `complianceRules`. `runner` may be the caller's transaction.
 */
export async function highRiskThreshold(runner: Runner, organizationId: string, plan: TierDefinition): Promise<number> {
  return (await complianceSettingsOf(runner, organizationId, plan)).maxRiskScore;
}

/**
 * `highRiskThreshold` as part of another feature's statement that must stay one statement (the
 * refresh of a known device): an SQL integer expression for the organization whose id is
 * `organizationId` (a parameter or column of the caller's query), under `plan`.
 */
export function highRiskThresholdSql(organizationId: string, plan: TierDefinition): string {
  const fallback = Math.trunc(DEFAULT_COMPLIANCE_SETTINGS.maxRiskScore);
  if (!plan.features.complianceRules) return String(fallback);
  return `COALESCE((SELECT max_risk_score FROM compliance_settings
                     WHERE organization_id = ${sqlReference(organizationId)}), ${fallback})`;
}
