import { describe, expect, it } from '@jest/globals';
import { DEFAULT_COMPLIANCE_SETTINGS, complianceStatus, type ComplianceSubject } from './compliance-checks.js';

const device: ComplianceSubject = {
  riskScore: 10,
  osVersion: '17.4',
  appVersion: '2.1.0',
  jailbreakDetected: false,
  country: 'US',
  isBlocked: false,
};

describe('compliance checks', () => {
  it('applies only the risk score and the block under the defaults', () => {
    expect(complianceStatus(DEFAULT_COMPLIANCE_SETTINGS, device)).toEqual({
      isCompliant: true,
      checks: [
        { name: 'max_risk_score', passed: true, expected: 50, actual: 10 },
        { name: 'not_blocked', passed: true, expected: false, actual: false },
      ],
    });
  });

  it('passes a score at the maximum and fails one above it', () => {
    expect(complianceStatus(DEFAULT_COMPLIANCE_SETTINGS, { ...device, riskScore: 50 }).isCompliant).toBe(true);
    expect(complianceStatus(DEFAULT_COMPLIANCE_SETTINGS, { ...device, riskScore: 51 }).isCompliant).toBe(false);
  });

  it('compares versions numerically, not as text', () => {
    const settings = { ...DEFAULT_COMPLIANCE_SETTINGS, minOsVersion: '9.3', minAppVersion: '2.1' };
    const status = complianceStatus(settings, { ...device, osVersion: '10.0', appVersion: '2.1.0-beta' });
    expect(status.checks.filter((check) => check.name !== 'max_risk_score' && check.name !== 'not_blocked')).toEqual([
      { name: 'min_os_version', passed: true, expected: '9.3', actual: '10.0' },
      { name: 'min_app_version', passed: false, expected: '2.1', actual: '2.1.0-beta' },
    ]);
    expect(status.isCompliant).toBe(false);
  });

  it('fails a rule about a value the device never reported, or one that is not a version', () => {
    const settings = { ...DEFAULT_COMPLIANCE_SETTINGS, minOsVersion: '16', allowedCountries: ['US'] };
    const unknown = complianceStatus(settings, { ...device, osVersion: null, country: null });
    expect(unknown.checks).toEqual(
      expect.arrayContaining([
        { name: 'min_os_version', passed: false, expected: '16', actual: null },
        { name: 'allowed_country', passed: false, expected: ['US'], actual: null },
      ]),
    );
    expect(complianceStatus(settings, { ...device, osVersion: 'beta' }).isCompliant).toBe(false);
  });

  it('fails a jailbreak only when the organization blocks jailbreaks', () => {
    const jailbroken = { ...device, jailbreakDetected: true };
    expect(complianceStatus(DEFAULT_COMPLIANCE_SETTINGS, jailbroken).isCompliant).toBe(true);
    const strict = complianceStatus({ ...DEFAULT_COMPLIANCE_SETTINGS, blockOnJailbreak: true }, jailbroken);
    expect(strict.checks).toContainEqual({ name: 'no_jailbreak', passed: false, expected: false, actual: true });
    expect(strict.isCompliant).toBe(false);
  });

  it('matches countries case-insensitively and fails a blocked device', () => {
    const settings = { ...DEFAULT_COMPLIANCE_SETTINGS, allowedCountries: ['DE', 'US'] };
    expect(complianceStatus(settings, { ...device, country: 'de' }).isCompliant).toBe(true);
    expect(complianceStatus(settings, { ...device, country: 'FR' }).isCompliant).toBe(false);
    expect(complianceStatus(DEFAULT_COMPLIANCE_SETTINGS, { ...device, isBlocked: true }).isCompliant).toBe(false);
  });
});
