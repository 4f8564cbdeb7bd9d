/**
 * The device risk score, 0-100: a sum of documented signals, each with a fixed weight and a
 * cap, so a score can always be explained by its `reasons`. Pure: no I/O.
 *
 * | signal | weight |
 * |---|---|
 * | device reported a jailbreak | 40 |
 * | development App Attest environment (a debug build, not an App Store install) | 15 |
 * | failed attestations or assertions of this key | 5 each, at most 25 |
 * | assertion counter anomalies (replays, rollbacks) | 15 each, at most 30 |
 * | attestation velocity this hour | 10 above 20 per hour, 20 above 60 per hour |
 * | blocked by an administrator | the score is 100 |
 */
export interface RiskSignals {
  jailbreakDetected: boolean;
  environment: 'development' | 'production';
  failureCount: number;
  counterAnomalies: number;
  attestationsThisHour: number;
  blocked: boolean;
}

/** A device's signals as the `devices` table stores them (its columns' names). */
export interface StoredRiskSignals {
  readonly jailbreak_detected: boolean;
  readonly environment: 'development' | 'production';
  readonly failure_count: number;
  readonly counter_anomalies: number;
  readonly is_blocked?: boolean;
}

/**
 * Scores a stored device: its columns, the attestations counted in the current hour (the
 * velocity window, read as each query reads it), and whether it is blocked (the row's flag
 * unless the caller is changing it).
 */
export function scoreStoredDevice(
  device: StoredRiskSignals,
  attestationsThisHour: number,
  blocked = device.is_blocked ?? false,
): RiskAssessment {
  return scoreRisk({
    jailbreakDetected: device.jailbreak_detected,
    environment: device.environment,
    failureCount: device.failure_count,
    counterAnomalies: device.counter_anomalies,
    attestationsThisHour,
    blocked,
  });
}

export interface RiskAssessment {
  score: number;
  reasons: string[];
}

export const RISK_WEIGHTS = {
  jailbreak: 40,
  developmentEnvironment: 15,
  perFailure: 5,
  maxFailures: 25,
  perCounterAnomaly: 15,
  maxCounterAnomalies: 30,
  velocityHigh: 10,
  velocityVeryHigh: 20,
  velocityHighThreshold: 20,
  velocityVeryHighThreshold: 60,
} as const;

export function scoreRisk(signals: RiskSignals): RiskAssessment {
  if (signals.blocked) return { score: 100, reasons: ['blocked'] };
  const parts: [string, number][] = [];
  if (signals.jailbreakDetected) parts.push(['jailbreak_detected', RISK_WEIGHTS.jailbreak]);
  if (signals.environment === 'development')
    parts.push(['development_environment', RISK_WEIGHTS.developmentEnvironment]);
  if (signals.failureCount > 0) {
    parts.push([
      'failed_attestations',
      Math.min(signals.failureCount * RISK_WEIGHTS.perFailure, RISK_WEIGHTS.maxFailures),
    ]);
  }
  if (signals.counterAnomalies > 0) {
    parts.push([
      'counter_anomalies',
      Math.min(signals.counterAnomalies * RISK_WEIGHTS.perCounterAnomaly, RISK_WEIGHTS.maxCounterAnomalies),
    ]);
  }
  if (signals.attestationsThisHour > RISK_WEIGHTS.velocityVeryHighThreshold) {
    parts.push(['attestation_velocity', RISK_WEIGHTS.velocityVeryHigh]);
  } else if (signals.attestationsThisHour > RISK_WEIGHTS.velocityHighThreshold) {
    parts.push(['attestation_velocity', RISK_WEIGHTS.velocityHigh]);
  }
  const score = Math.min(
    100,
    parts.reduce((sum, [, weight]) => sum + weight, 0),
  );
  return { score, reasons: parts.map(([reason]) => reason) };
}
