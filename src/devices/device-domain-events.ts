import type { AppId, OrganizationId } from '../common/access/tenant-id.js';

/**
 * The domain events of attested devices. Attestation and risk alerts decide them and publish them
 * (`DomainEvents.emit`) in the unit of work of the change that causes them; subscribers (webhooks) only
 * react. Plain data: no decision is left to a subscriber.
 */

/** Where a device event happened. */
export interface AttestingApp {
  organizationId: OrganizationId;
  appId: AppId;
  /** Null for an Android-only app. */
  bundleId: string | null;
}

/** What a device event says about the device. */
export interface DeviceFacts {
  keyId: string;
  /** The optional device id the client sent; usually absent. */
  clientDeviceId: string | null;
  riskScore: number;
  jailbreakDetected: boolean;
  deviceModel: string | null;
  osVersion: string | null;
}

/** A key attested for the first time in the app. */
export interface DeviceRegistered {
  readonly type: 'DeviceRegistered';
  app: AttestingApp;
  device: DeviceFacts;
}

/** An attempt scored the device above the organization's high-risk threshold. */
export interface HighRiskDevice {
  readonly type: 'HighRiskDevice';
  app: AttestingApp;
  device: DeviceFacts;
  threshold: number;
}

/** A validate or refresh was refused; `device` carries the score of this attempt. */
export interface AttestationFailed {
  readonly type: 'AttestationFailed';
  app: AttestingApp;
  device: DeviceFacts;
  errorCode: string;
}

export type AnomalyPattern = 'counter_regression' | 'failure_burst' | 'key_seen_in_multiple_apps' | 'alert_rule';

/** The risk alert rule that an event tripped (`pattern: 'alert_rule'`). */
export interface TrippedRule {
  id: string;
  name: string;
  appId: string | null;
  condition: { type: string; threshold: number; windowMinutes: number | null };
  cooldownMinutes: number;
}

/** Something in a device's behaviour looks wrong: a pattern of failures, or a risk alert rule. */
export interface DeviceAnomalyDetected {
  readonly type: 'DeviceAnomalyDetected';
  app: AttestingApp;
  device: DeviceFacts;
  pattern: AnomalyPattern;
  /** The failure that revealed it; null for an alert rule tripped by a success. */
  errorCode: string | null;
  detail: string;
  /** For `alert_rule`: the rule and the number compared with its threshold. */
  alert?: { rule: TrippedRule; observed: number };
}

export type DeviceDomainEvent = DeviceRegistered | HighRiskDevice | AttestationFailed | DeviceAnomalyDetected;
