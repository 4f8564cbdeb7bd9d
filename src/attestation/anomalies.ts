import type { AnomalyPattern } from '../devices/device-domain-events.js';

/** Failures of one known device within this window that make a burst. */
export const FAILURE_BURST = { count: 5, windowMinutes: 10 } as const;

/** What the device's history says around a refused attempt (`DevicesRepository.recordFailure`). */
export interface FailureContext {
  errorCode: string;
  /** Failures of the key's device within `FAILURE_BURST.windowMinutes`, this one included; null without a device. */
  recentFailures: number | null;
  /** Whether another app of the organization knows the key. */
  keyInOtherApps: boolean;
}

export interface Anomaly {
  pattern: Exclude<AnomalyPattern, 'alert_rule'>;
  detail: string;
}

/**
 * The anomalies a refused attempt reveals: a counter regression (a replayed or cloned key), a
 * burst of failures of one device (announced once, when the count reaches the threshold), a key
 * already attested for another app of the organization. Pure.
 */
export function anomaliesOf(failure: FailureContext): Anomaly[] {
  const found: Anomaly[] = [];
  if (failure.errorCode === 'counter_not_increasing') {
    found.push({
      pattern: 'counter_regression',
      detail: 'the assertion counter did not increase: a replayed or cloned key',
    });
  }
  // Exactly at the threshold, so one burst is announced once.
  if (failure.recentFailures === FAILURE_BURST.count) {
    found.push({
      pattern: 'failure_burst',
      detail: `${failure.recentFailures} failed attempts within ${FAILURE_BURST.windowMinutes} minutes`,
    });
  }
  if (failure.keyInOtherApps) {
    found.push({
      pattern: 'key_seen_in_multiple_apps',
      detail: 'this key is attested for another app of the organization',
    });
  }
  return found;
}

/** Whether `riskScore` makes the device high risk under `threshold` (the organization's compliance ceiling). */
export function isHighRisk(riskScore: number, threshold: number): boolean {
  return riskScore > threshold;
}
