import { describe, expect, it } from '@jest/globals';
import { scoreRisk, scoreStoredDevice, type RiskSignals } from './risk-score.js';

const clean: RiskSignals = {
  jailbreakDetected: false,
  environment: 'production',
  failureCount: 0,
  counterAnomalies: 0,
  attestationsThisHour: 1,
  blocked: false,
};

describe('risk score', () => {
  it('is 0 for a clean production device', () => {
    expect(scoreRisk(clean)).toEqual({ score: 0, reasons: [] });
  });

  it('adds each signal with its weight and explains it', () => {
    expect(scoreRisk({ ...clean, jailbreakDetected: true })).toEqual({ score: 40, reasons: ['jailbreak_detected'] });
    expect(scoreRisk({ ...clean, environment: 'development' }).score).toBe(15);
    expect(scoreRisk({ ...clean, failureCount: 2 }).score).toBe(10);
    expect(scoreRisk({ ...clean, counterAnomalies: 1 }).score).toBe(15);
    expect(scoreRisk({ ...clean, attestationsThisHour: 21 }).score).toBe(10);
    expect(scoreRisk({ ...clean, attestationsThisHour: 61 }).score).toBe(20);
  });

  it('caps each signal and the total', () => {
    expect(scoreRisk({ ...clean, failureCount: 50 }).score).toBe(25);
    expect(scoreRisk({ ...clean, counterAnomalies: 9 }).score).toBe(30);
    const worst = scoreRisk({
      jailbreakDetected: true,
      environment: 'development',
      failureCount: 99,
      counterAnomalies: 99,
      attestationsThisHour: 999,
      blocked: false,
    });
    expect(worst.score).toBe(100);
    expect(worst.reasons).toHaveLength(5);
  });

  it('scores a blocked device 100 whatever else is true', () => {
    expect(scoreRisk({ ...clean, blocked: true })).toEqual({ score: 100, reasons: ['blocked'] });
  });
});

describe('a stored device, scored', () => {
  const row = { jailbreak_detected: true, environment: 'development' as const, failure_count: 2, counter_anomalies: 1 };

  it('reads the signals from the columns, with the hour counted by the caller', () => {
    expect(scoreStoredDevice(row, 61)).toEqual(
      scoreRisk({
        jailbreakDetected: true,
        environment: 'development',
        failureCount: 2,
        counterAnomalies: 1,
        attestationsThisHour: 61,
        blocked: false,
      }),
    );
  });

  it("takes the row's block unless the caller is changing it", () => {
    expect(scoreStoredDevice({ ...row, is_blocked: true }, 0).score).toBe(100);
    expect(scoreStoredDevice({ ...row, is_blocked: true }, 0, false).score).toBeLessThan(100);
    expect(scoreStoredDevice(row, 0, true).score).toBe(100);
  });
});
