import { tierDefinition } from '../common/tiers.js';
import { queryRows } from '../database/sql.js';
import { DEFAULT_COMPLIANCE_SETTINGS, type ComplianceSettings } from './compliance-checks.js';

/** A DataSource or a transaction's EntityManager. */
type Runner = Parameters<typeof queryRows>[0];

export interface ComplianceSettingsInForce extends ComplianceSettings {
  /** When an Admin last saved the settings in force; null while they are the defaults. */
  updatedAt: Date | null;
}

interface SettingsRow {
  service_tier: string;
  max_risk_score: number | null;
  min_os_version: string | null;
  min_app_version: string | null;
  block_on_jailbreak: boolean | null;
  allowed_countries: string[] | null;
  updated_at: Date | null;
}

/**
 * The organization's compliance settings in force: what an Admin saved, on plans with
 * `complianceRules`; the defaults otherwise (no row yet, or a plan without the feature, where
 * saved settings wait for an upgrade). One indexed read; `runner` may be the caller's transaction.
 */
export async function complianceSettingsOf(runner: Runner, organizationId: string): Promise<ComplianceSettingsInForce> {
  const [row] = await queryRows<SettingsRow>(
    runner,
    `SELECT o.service_tier, c.max_risk_score, c.min_os_version, c.min_app_version, c.block_on_jailbreak,
            c.allowed_countries, c.updated_at
       FROM organizations o LEFT JOIN compliance_settings c ON c.organization_id = o.id
      WHERE o.id = $1`,
    [organizationId],
  );
  if (!row || row.max_risk_score === null || !tierDefinition(row.service_tier).features.complianceRules) {
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
export async function highRiskThreshold(runner: Runner, organizationId: string): Promise<number> {
  return (await complianceSettingsOf(runner, organizationId)).maxRiskScore;
}
