import { describe, expect, it } from '@jest/globals';
import {
  describeAlert,
  inCooldown,
  normalizeCondition,
  ruleApplies,
  type AlertRule,
  type DeviceEventNotice,
} from './risk-alert-rule.js';

const rule = (condition: AlertRule['condition'], appId: string | null = null): AlertRule => ({
  id: 'rule',
  organizationId: 'org',
  appId,
  name: 'Rule',
  condition,
  channel: 'webhook',
  cooldownMinutes: 60,
  lastFiredAt: null,
});

const failure: DeviceEventNotice = {
  keyId: 'key',
  result: 'failure',
  riskScore: null,
  isNewDevice: false,
  errorCode: 'rp_id_mismatch',
};
const admitted: DeviceEventNotice = {
  keyId: 'key',
  result: 'success',
  riskScore: 55,
  isNewDevice: true,
  errorCode: null,
};

describe('risk alert rules', () => {
  describe('conditions', () => {
    it('default the counting window to 60 minutes and keep a given one', () => {
      expect(normalizeCondition({ type: 'failed_attestations_per_app', threshold: 5 })).toEqual({
        type: 'failed_attestations_per_app',
        threshold: 5,
        windowMinutes: 60,
      });
      expect(normalizeCondition({ type: 'failed_attestations_per_device', threshold: 3, windowMinutes: 10 })).toEqual({
        type: 'failed_attestations_per_device',
        threshold: 3,
        windowMinutes: 10,
      });
    });

    it('take no window for a risk score and only the hour for new devices', () => {
      expect(normalizeCondition({ type: 'risk_score_above', threshold: 70 })).toEqual({
        type: 'risk_score_above',
        threshold: 70,
        windowMinutes: null,
      });
      expect(normalizeCondition({ type: 'risk_score_above', threshold: 100, windowMinutes: 5 })).toEqual([
        { field: 'condition.threshold', message: expect.stringContaining('0 to 99') },
        { field: 'condition.windowMinutes', message: expect.any(String) },
      ]);
      expect(normalizeCondition({ type: 'new_devices_per_hour', threshold: 10, windowMinutes: 60 })).toMatchObject({
        windowMinutes: 60,
      });
      expect(normalizeCondition({ type: 'new_devices_per_hour', threshold: 10, windowMinutes: 30 })).toEqual([
        { field: 'condition.windowMinutes', message: expect.any(String) },
      ]);
    });
  });

  describe('which events a rule looks at', () => {
    it('counts failures for the failure conditions and nothing else', () => {
      const perApp = rule({ type: 'failed_attestations_per_app', threshold: 3, windowMinutes: 10 });
      expect(ruleApplies(perApp, 'app', failure)).toBe(true);
      expect(ruleApplies(perApp, 'app', admitted)).toBe(false);
    });

    it('looks at a risk score only above the threshold, scored successes and refusals alike', () => {
      const risky = rule({ type: 'risk_score_above', threshold: 50, windowMinutes: null });
      expect(ruleApplies(risky, 'app', admitted)).toBe(true);
      expect(ruleApplies(risky, 'app', { ...admitted, riskScore: 50 })).toBe(false);
      expect(ruleApplies(risky, 'app', { ...failure, riskScore: 80 })).toBe(true);
      expect(ruleApplies(risky, 'app', failure)).toBe(false);
    });

    it('looks at new devices only for the new device condition, and only in its app when it has one', () => {
      const newDevices = rule({ type: 'new_devices_per_hour', threshold: 1, windowMinutes: 60 }, 'app');
      expect(ruleApplies(newDevices, 'app', admitted)).toBe(true);
      expect(ruleApplies(newDevices, 'other-app', admitted)).toBe(false);
      expect(ruleApplies(newDevices, 'app', { ...admitted, isNewDevice: false })).toBe(false);
    });
  });

  it('cools down for its cooldown after firing', () => {
    const fired = { lastFiredAt: new Date('2026-01-01T00:00:00Z'), cooldownMinutes: 30 };
    expect(inCooldown({ ...fired, lastFiredAt: null }, new Date())).toBe(false);
    expect(inCooldown(fired, new Date('2026-01-01T00:29:59Z'))).toBe(true);
    expect(inCooldown(fired, new Date('2026-01-01T00:30:00Z'))).toBe(false);
  });

  it('describes what was observed', () => {
    expect(describeAlert(rule({ type: 'failed_attestations_per_app', threshold: 3, windowMinutes: 10 }), 4)).toBe(
      '4 failed attestations of the app within 10 minutes, above 3',
    );
    expect(describeAlert(rule({ type: 'risk_score_above', threshold: 70, windowMinutes: null }), 85)).toBe(
      "a device scored 85, above the rule's risk score of 70",
    );
  });
});
