import type { TierDefinition } from '../common/tiers.js';
import { DEFAULT_COMPLIANCE_SETTINGS, type ComplianceSettings } from './compliance-checks.js';
import type { SavedComplianceSettings } from './compliance.repository.js';

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
 * The arguments of the SQL function `compliance_high_risk_threshold(organization, compliance_rules,
 * fallback)` (migration ComplianceHighRiskThreshold), the compliance feature's read model for a
 * statement of another feature that must stay one statement (the device refresh of decision 0062).
 */
export function highRiskThresholdInputs(plan: TierDefinition): { complianceRules: boolean; fallback: number } {
  return {
    complianceRules: plan.features.complianceRules,
    fallback: Math.trunc(DEFAULT_COMPLIANCE_SETTINGS.maxRiskScore),
  };
}
