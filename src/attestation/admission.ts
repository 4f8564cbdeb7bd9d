import type { RiskThresholds } from '../apps/app.entity.js';
import type { RiskAssessment } from '../devices/risk-score.js';

/** A verified key's device as the admission rule reads it (the `devices` columns' names). */
export interface AdmissionCandidate {
  readonly is_blocked: boolean;
  readonly jailbreak_detected: boolean;
  readonly attestation_count: number;
  readonly first_seen_at: Date;
}

/** Why the rule refuses a device. `scored`: the refusal is about the score's inputs, reported with it. */
export type AdmissionRefusal =
  | { readonly reason: 'too_old'; readonly scored: false; readonly maxDays: number }
  | { readonly reason: 'blocked'; readonly scored: false }
  | { readonly reason: 'jailbreak'; readonly scored: true }
  | { readonly reason: 'risk'; readonly scored: true; readonly risk: RiskAssessment }
  | { readonly reason: 'history'; readonly scored: true; readonly minAttestationCount: number };

/**
 * The admission rule (docs/risk.md, "How the app's thresholds and the organization's compliance
 * combine"), written once: whether the app's thresholds admit a verified key's device with this
 * risk, in the documented order, for a validate (`attestation`) or a refresh (`assertion`). The
 * transactional admission applies it to the device as its attempt left it; the one-statement
 * refresh (decision 0062) applies it to the row it read, and takes the transactional path for any
 * refusal. The quota comes after it, in the transaction only: the one-statement refresh takes a
 * counted device, which the quota never refuses. Pure: no I/O.
 */
export function admissionRefusal(
  kind: 'attestation' | 'assertion',
  thresholds: RiskThresholds,
  device: AdmissionCandidate,
  risk: RiskAssessment,
  now: number,
): AdmissionRefusal | null {
  const maxDays = thresholds.maxDeviceAge;
  if (kind === 'assertion' && maxDays !== null && now - device.first_seen_at.getTime() > maxDays * 86_400_000) {
    return { reason: 'too_old', scored: false, maxDays };
  }
  if (device.is_blocked) return { reason: 'blocked', scored: false };
  if (thresholds.blockOnJailbreak && device.jailbreak_detected) return { reason: 'jailbreak', scored: true };
  if (risk.score > thresholds.maxAllowedRiskScore) return { reason: 'risk', scored: true, risk };
  if (device.attestation_count < thresholds.minAttestationCount) {
    return { reason: 'history', scored: true, minAttestationCount: thresholds.minAttestationCount };
  }
  return null;
}
