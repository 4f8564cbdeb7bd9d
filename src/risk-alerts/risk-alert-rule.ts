import type { FieldError } from '../common/errors/app-exception.js';

/**
 * Risk alert rules: what a condition means, how it is checked and described. Pure: no I/O, so the
 * evaluation's decisions are unit-tested without a database.
 */
export const CONDITION_TYPES = [
  'risk_score_above',
  'failed_attestations_per_device',
  'failed_attestations_per_app',
  'new_devices_per_hour',
] as const;
export type ConditionType = (typeof CONDITION_TYPES)[number];

export const ALERT_CHANNELS = ['webhook', 'email'] as const;
export type AlertChannel = (typeof ALERT_CHANNELS)[number];

export const DEFAULT_WINDOW_MINUTES = 60;
export const MAX_WINDOW_MINUTES = 1_440;
/** `new_devices_per_hour` always counts the last hour. */
export const NEW_DEVICES_WINDOW_MINUTES = 60;
export const MAX_COUNT_THRESHOLD = 1_000_000;
/** A score is at most 100, so "above 100" could never fire. */
export const MAX_RISK_THRESHOLD = 99;

export interface AlertCondition {
  type: ConditionType;
  threshold: number;
  /** The counting window; null for `risk_score_above`, which looks at each event alone. */
  windowMinutes: number | null;
}

/** The condition as a request gives it, after type validation. */
export interface AlertConditionInput {
  type: ConditionType;
  threshold: number;
  windowMinutes?: number | null;
}

/** What the evaluation needs of a rule. */
export interface AlertRule {
  id: string;
  organizationId: string;
  /** Only this app's events when set; every app of the organization when null. */
  appId: string | null;
  name: string;
  condition: AlertCondition;
  channel: AlertChannel;
  cooldownMinutes: number;
  lastFiredAt: Date | null;
}

/** A device event as the attestation service recorded it. */
export interface DeviceEventNotice {
  keyId: string;
  result: 'success' | 'failure';
  /** This attempt's risk score; null when it was refused before scoring. */
  riskScore: number | null;
  /** A successful first attestation of this key in this app. */
  isNewDevice: boolean;
  errorCode: string | null;
}

/**
 * The condition with its defaults applied, or the fields that are wrong. The window belongs to
 * the counting conditions: `risk_score_above` takes none, and `new_devices_per_hour` only 60.
 */
export function normalizeCondition(input: AlertConditionInput): AlertCondition | FieldError[] {
  const errors: FieldError[] = [];
  const window = input.windowMinutes ?? null;
  switch (input.type) {
    case 'risk_score_above':
      if (input.threshold > MAX_RISK_THRESHOLD) {
        errors.push({ field: 'condition.threshold', message: `must be a risk score from 0 to ${MAX_RISK_THRESHOLD}` });
      }
      if (window !== null) {
        errors.push({
          field: 'condition.windowMinutes',
          message: 'risk_score_above looks at each event: leave it out',
        });
      }
      return errors.length ? errors : { type: input.type, threshold: input.threshold, windowMinutes: null };
    case 'new_devices_per_hour':
      if (window !== null && window !== NEW_DEVICES_WINDOW_MINUTES) {
        errors.push({
          field: 'condition.windowMinutes',
          message: `new_devices_per_hour counts the last ${NEW_DEVICES_WINDOW_MINUTES} minutes: leave it out`,
        });
      }
      return errors.length
        ? errors
        : { type: input.type, threshold: input.threshold, windowMinutes: NEW_DEVICES_WINDOW_MINUTES };
    case 'failed_attestations_per_device':
    case 'failed_attestations_per_app':
      return { type: input.type, threshold: input.threshold, windowMinutes: window ?? DEFAULT_WINDOW_MINUTES };
  }
}

/** Whether `event` of `appId` could trip `rule`: the cheap test before anything is counted. */
export function ruleApplies(rule: AlertRule, appId: string, event: DeviceEventNotice): boolean {
  if (rule.appId !== null && rule.appId !== appId) return false;
  switch (rule.condition.type) {
    case 'risk_score_above':
      return event.riskScore !== null && event.riskScore > rule.condition.threshold;
    case 'failed_attestations_per_device':
    case 'failed_attestations_per_app':
      return event.result === 'failure';
    case 'new_devices_per_hour':
      return event.result === 'success' && event.isNewDevice;
  }
}

/** Whether the rule fired less than its cooldown before `now`. */
export function inCooldown(rule: Pick<AlertRule, 'lastFiredAt' | 'cooldownMinutes'>, now: Date): boolean {
  return rule.lastFiredAt !== null && now.getTime() < rule.lastFiredAt.getTime() + rule.cooldownMinutes * 60_000;
}

/** One sentence saying what was observed, for the webhook's `detail` and the mail. */
export function describeAlert(rule: Pick<AlertRule, 'appId' | 'condition'>, observed: number): string {
  const { type, threshold, windowMinutes } = rule.condition;
  switch (type) {
    case 'risk_score_above':
      return `a device scored ${observed}, above the rule's risk score of ${threshold}`;
    case 'failed_attestations_per_device':
      return `${observed} failed attestations of one device within ${windowMinutes} minutes, above ${threshold}`;
    case 'failed_attestations_per_app':
      return `${observed} failed attestations of the app within ${windowMinutes} minutes, above ${threshold}`;
    case 'new_devices_per_hour':
      return `${observed} new devices ${rule.appId ? 'of the app ' : ''}within ${windowMinutes} minutes, above ${threshold}`;
  }
}
