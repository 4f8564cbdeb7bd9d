import { describe, expect, it } from '@jest/globals';
import { DEFAULT_RISK_THRESHOLDS, type RiskThresholds } from '../apps/app.entity.js';
import { admissionRefusal, type AdmissionCandidate } from './admission.js';

const NOW = Date.UTC(2026, 10, 26);
const DAY = 86_400_000;
const device: AdmissionCandidate = {
  is_blocked: false,
  jailbreak_detected: false,
  attestation_count: 3,
  first_seen_at: new Date(NOW - 10 * DAY),
};
const clean = { score: 0, reasons: [] };
const strict: RiskThresholds = {
  ...DEFAULT_RISK_THRESHOLDS,
  maxAllowedRiskScore: 30,
  blockOnJailbreak: true,
  minAttestationCount: 2,
  maxDeviceAge: 5,
};

describe('the admission rule', () => {
  it('admits a clean device under the default thresholds, for a validate and a refresh', () => {
    expect(admissionRefusal('attestation', DEFAULT_RISK_THRESHOLDS, device, clean, NOW)).toBeNull();
    expect(admissionRefusal('assertion', DEFAULT_RISK_THRESHOLDS, device, clean, NOW)).toBeNull();
  });

  it('refuses in the documented order: age (refresh only), blocked, jailbreak, risk, history', () => {
    const everything: AdmissionCandidate = {
      is_blocked: true,
      jailbreak_detected: true,
      attestation_count: 1,
      first_seen_at: new Date(NOW - 6 * DAY),
    };
    const risky = { score: 55, reasons: ['jailbreak_detected', 'development_environment'] };
    const reasons = (candidate: AdmissionCandidate, kind: 'attestation' | 'assertion' = 'assertion') =>
      admissionRefusal(kind, strict, candidate, risky, NOW)?.reason;
    expect(reasons(everything)).toBe('too_old');
    expect(reasons(everything, 'attestation')).toBe('blocked');
    expect(reasons({ ...everything, first_seen_at: device.first_seen_at })).toBe('too_old');
    const young = { ...everything, first_seen_at: new Date(NOW - 4 * DAY) };
    expect(reasons(young)).toBe('blocked');
    expect(reasons({ ...young, is_blocked: false })).toBe('jailbreak');
    expect(reasons({ ...young, is_blocked: false, jailbreak_detected: false })).toBe('risk');
    expect(
      admissionRefusal('assertion', strict, { ...young, is_blocked: false, jailbreak_detected: false }, clean, NOW),
    ).toEqual({ reason: 'history', scored: true, minAttestationCount: 2 });
  });

  it('says which refusals are about the score, so the attempt reports its score with them', () => {
    const old = { ...device, first_seen_at: new Date(NOW - 6 * DAY) };
    expect(admissionRefusal('assertion', strict, old, clean, NOW)).toEqual({
      reason: 'too_old',
      scored: false,
      maxDays: 5,
    });
    expect(admissionRefusal('attestation', strict, { ...device, is_blocked: true }, clean, NOW)?.scored).toBe(false);
    const risk = { score: 31, reasons: ['counter_anomalies'] };
    expect(admissionRefusal('attestation', strict, device, risk, NOW)).toEqual({ reason: 'risk', scored: true, risk });
  });

  it('takes a score equal to the limit and a key exactly as old as the limit', () => {
    const limit = { ...device, first_seen_at: new Date(NOW - 5 * DAY) };
    expect(admissionRefusal('assertion', strict, limit, { score: 30, reasons: [] }, NOW)).toBeNull();
  });
});
