import { compareVersions } from '../common/version.js';

/** An organization's compliance rules over its devices. */
export interface ComplianceSettings {
  /** A device complies at or below this risk score; above it, `device.high_risk` fires. */
  maxRiskScore: number;
  minOsVersion: string | null;
  minAppVersion: string | null;
  /** Whether a reported jailbreak alone makes a device non-compliant. */
  blockOnJailbreak: boolean;
  /** ISO 3166-1 alpha-2 codes, upper case; null allows every country. */
  allowedCountries: string[] | null;
}

/** What an organization has until an Admin changes it, and on plans without `complianceRules`. */
export const DEFAULT_COMPLIANCE_SETTINGS: Readonly<ComplianceSettings> = Object.freeze({
  maxRiskScore: 50,
  minOsVersion: null,
  minAppVersion: null,
  blockOnJailbreak: false,
  allowedCountries: null,
});

/** The device as the checks read it. */
export interface ComplianceSubject {
  riskScore: number;
  osVersion: string | null;
  appVersion: string | null;
  jailbreakDetected: boolean;
  country: string | null;
  isBlocked: boolean;
}

export type ComplianceCheckName =
  'max_risk_score' | 'min_os_version' | 'min_app_version' | 'no_jailbreak' | 'allowed_country' | 'not_blocked';

/**
 * One rule applied to one device. `expected` is the rule's value (the maximum score, the minimum
 * version, `false` for the jailbreak and blocked flags, the list of countries) and `actual` the
 * device's value, null when the device never reported it.
 */
export interface ComplianceCheck {
  name: ComplianceCheckName;
  passed: boolean;
  expected: number | string | boolean | string[];
  actual: number | string | boolean | null;
}

export interface ComplianceStatus {
  isCompliant: boolean;
  checks: ComplianceCheck[];
}

/**
 * The device's compliance: one check per rule the organization has set (the risk score and the
 * administrator's block always apply), compliant when every check passes. A version or country
 * the device never reported cannot satisfy a rule about it.
 */
export function complianceStatus(settings: ComplianceSettings, device: ComplianceSubject): ComplianceStatus {
  const checks: ComplianceCheck[] = [
    {
      name: 'max_risk_score',
      passed: device.riskScore <= settings.maxRiskScore,
      expected: settings.maxRiskScore,
      actual: device.riskScore,
    },
  ];
  if (settings.minOsVersion !== null) {
    checks.push(versionCheck('min_os_version', settings.minOsVersion, device.osVersion));
  }
  if (settings.minAppVersion !== null) {
    checks.push(versionCheck('min_app_version', settings.minAppVersion, device.appVersion));
  }
  if (settings.blockOnJailbreak) {
    checks.push({
      name: 'no_jailbreak',
      passed: !device.jailbreakDetected,
      expected: false,
      actual: device.jailbreakDetected,
    });
  }
  if (settings.allowedCountries !== null) {
    const country = device.country?.toUpperCase() ?? null;
    checks.push({
      name: 'allowed_country',
      passed: country !== null && settings.allowedCountries.includes(country),
      expected: settings.allowedCountries,
      actual: country,
    });
  }
  checks.push({ name: 'not_blocked', passed: !device.isBlocked, expected: false, actual: device.isBlocked });
  return { isCompliant: checks.every((check) => check.passed), checks };
}

function versionCheck(name: ComplianceCheckName, minimum: string, actual: string | null): ComplianceCheck {
  const order = actual === null ? null : compareVersions(actual, minimum);
  return { name, passed: order !== null && order >= 0, expected: minimum, actual };
}
