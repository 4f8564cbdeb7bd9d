import type { EntityManager } from 'typeorm';
import { DEFAULT_COMPLIANCE_SETTINGS } from '../compliance/compliance-checks.js';
import { complianceSettingsOf } from '../compliance/compliance-settings.js';

/** The interface document's default when an organization sets no compliance `maxRiskScore`. */
export const DEFAULT_HIGH_RISK_THRESHOLD = DEFAULT_COMPLIANCE_SETTINGS.maxRiskScore;

/**
 * The risk score above which `device.high_risk` fires: the organization's compliance
 * `maxRiskScore` in force (the default on plans without `complianceRules`), read in the caller's
 * transaction.
 */
export async function highRiskThreshold(manager: EntityManager, organizationId: string): Promise<number> {
  return (await complianceSettingsOf(manager, organizationId)).maxRiskScore;
}
