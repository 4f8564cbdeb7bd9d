import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { highRiskThreshold } from './high-risk-threshold.js';
import type { SubscriptionEventName, SubscriptionWebhookData, WebhookEventName } from './webhook-event-catalog.js';
import { WebhookOutbox } from './webhook-outbox.js';

/** Where a device event happened. */
export interface AttestingApp {
  organizationId: string;
  appId: string;
  bundleId: string;
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

export interface AttestationFailure {
  keyId: string;
  errorCode: string;
  /** The device as this attempt scored it, when the refusal came after scoring. */
  scored: DeviceFacts | null;
  /** Otherwise, a known device scored with this failure counted (never the stored score). */
  counted?: DeviceFacts | null;
}

/** Flag event data: the flags module adds what it knows (environment, version, actor...). */
export interface FlagWebhookData {
  flag_id: string;
  flag_key: string;
  app_id: string;
  [field: string]: unknown;
}

/** Failures of one known device within this window that make a burst. */
export const FAILURE_BURST = { count: 5, windowMinutes: 10 } as const;

export type AnomalyPattern = 'counter_regression' | 'failure_burst' | 'key_seen_in_multiple_apps' | 'alert_rule';

const FAILURE_EVENTS: readonly WebhookEventName[] = [
  'device.attestation_failed',
  'device.high_risk',
  'attestation.anomaly',
];

interface StoredDevice {
  id: string;
  client_device_id: string;
  risk_score: number;
  jailbreak_detected: boolean;
  device_model: string | null;
  os_version: string | null;
}

/**
 * The producers of webhook events: typed methods other features call with their transaction's
 * manager, so each event commits or rolls back with its cause. None of them ever throws.
 */
@Injectable()
export class WebhookEvents {
  constructor(private readonly outbox: WebhookOutbox) {}

  /**
   * A successful validate or refresh: `device.new` and `device.attested.first` for a key seen
   * for the first time, `device.high_risk` when the score exceeds the organization's threshold.
   */
  async deviceAdmitted(
    manager: EntityManager,
    app: AttestingApp,
    device: DeviceFacts,
    isNewDevice: boolean,
  ): Promise<void> {
    // The hot path (a refresh by a clean device) costs no query.
    if (!isNewDevice && device.riskScore === 0) return;
    await this.outbox.guarded(
      manager,
      async () => {
        const subscribed = await this.outbox.subscribedEvents(manager, app.organizationId, { appId: app.appId });
        if (!subscribed.size) return;
        const data = deviceData(app, device);
        const events: [WebhookEventName, Record<string, unknown>][] = [];
        if (isNewDevice) events.push(['device.new', data], ['device.attested.first', data]);
        if (subscribed.has('device.high_risk')) {
          const threshold = await highRiskThreshold(manager, app.organizationId);
          if (device.riskScore > threshold) events.push(['device.high_risk', { ...data, threshold }]);
        }
        await this.write(manager, app, subscribed, events);
      },
      undefined,
    );
  }

  /**
   * A refused validate or refresh (written outside the refused transaction):
   * `device.attestation_failed`, `device.high_risk` when this attempt scored above the threshold,
   * and `attestation.anomaly` for a counter regression, a burst of failures of one device, or a
   * key already known to another app of the organization.
   */
  async attestationFailed(manager: EntityManager, app: AttestingApp, failure: AttestationFailure): Promise<void> {
    await this.outbox.guarded(
      manager,
      async () => {
        const subscribed = await this.outbox.subscribedEvents(manager, app.organizationId, { appId: app.appId });
        if (!FAILURE_EVENTS.some((event) => subscribed.has(event))) return;
        const stored = await manager.query<StoredDevice[]>(
          `SELECT id, client_device_id, risk_score, jailbreak_detected, device_model, os_version
             FROM devices WHERE app_id = $1 AND key_id = $2`,
          [app.appId, failure.keyId],
        );
        const device = stored[0] ?? null;
        // A new device refused after scoring was rolled back: only `scored` still knows it.
        const data = deviceData(
          app,
          failure.scored ??
            failure.counted ?? {
              keyId: failure.keyId,
              clientDeviceId: device?.client_device_id ?? null,
              riskScore: device?.risk_score ?? 0,
              jailbreakDetected: device?.jailbreak_detected ?? false,
              deviceModel: device?.device_model ?? null,
              osVersion: device?.os_version ?? null,
            },
        );
        const failed = { ...data, error_code: failure.errorCode };
        const events: [WebhookEventName, Record<string, unknown>][] = [['device.attestation_failed', failed]];
        if (failure.scored && subscribed.has('device.high_risk')) {
          const threshold = await highRiskThreshold(manager, app.organizationId);
          if (failure.scored.riskScore > threshold) events.push(['device.high_risk', { ...data, threshold }]);
        }
        if (subscribed.has('attestation.anomaly')) {
          for (const [pattern, detail] of await this.anomalies(manager, app, failure, device)) {
            events.push(['attestation.anomaly', { ...failed, pattern, detail }]);
          }
        }
        await this.write(manager, app, subscribed, events);
      },
      undefined,
    );
  }

  /**
   * `attestation.anomaly` for an organization's risk alert rule that an event of `device.keyId`
   * tripped: `alert` carries `pattern: 'alert_rule'`, the rule and what was observed. Written in the
   * caller's transaction (the one claiming the rule's cooldown); `device.riskScore`, when the event
   * was scored, wins over the stored score.
   */
  async alertRuleFired(
    manager: EntityManager,
    app: AttestingApp,
    device: { keyId: string; riskScore: number | null },
    alert: { pattern: Extract<AnomalyPattern, 'alert_rule'> } & Record<string, unknown>,
  ): Promise<void> {
    await this.outbox.guarded(
      manager,
      async () => {
        const [stored] = await manager.query<StoredDevice[]>(
          `SELECT id, client_device_id, risk_score, jailbreak_detected, device_model, os_version
             FROM devices WHERE app_id = $1 AND key_id = $2`,
          [app.appId, device.keyId],
        );
        const data = deviceData(app, {
          keyId: device.keyId,
          clientDeviceId: stored?.client_device_id ?? null,
          riskScore: device.riskScore ?? stored?.risk_score ?? 0,
          jailbreakDetected: stored?.jailbreak_detected ?? false,
          deviceModel: stored?.device_model ?? null,
          osVersion: stored?.os_version ?? null,
        });
        const anomaly = { ...data, ...alert };
        await this.outbox.insert(manager, app.organizationId, 'attestation.anomaly', anomaly, { appId: app.appId });
      },
      undefined,
    );
  }

  /** `flag.created`, `flag.updated` or `flag.deleted`, in the flag change's transaction. */
  async flagChanged(
    manager: EntityManager,
    organizationId: string,
    kind: 'created' | 'updated' | 'deleted',
    data: FlagWebhookData,
  ): Promise<void> {
    await this.outbox.enqueue(manager, organizationId, `flag.${kind}`, data);
  }

  /** Subscription events of one ingested entitlement change, in the ingestion's transaction. */
  async subscriptionChanged(
    manager: EntityManager,
    organizationId: string,
    events: readonly SubscriptionEventName[],
    data: SubscriptionWebhookData,
  ): Promise<void> {
    if (!events.length) return;
    await this.outbox.guarded(
      manager,
      async () => {
        for (const event of events) await this.outbox.insert(manager, organizationId, event, { ...data });
      },
      undefined,
    );
  }

  private async write(
    manager: EntityManager,
    app: AttestingApp,
    subscribed: Set<WebhookEventName>,
    events: [WebhookEventName, Record<string, unknown>][],
  ): Promise<void> {
    for (const [event, data] of events) {
      if (subscribed.has(event))
        await this.outbox.insert(manager, app.organizationId, event, data, { appId: app.appId });
    }
  }

  private async anomalies(
    manager: EntityManager,
    app: AttestingApp,
    failure: AttestationFailure,
    device: StoredDevice | null,
  ): Promise<[AnomalyPattern, string][]> {
    const found: [AnomalyPattern, string][] = [];
    if (failure.errorCode === 'counter_not_increasing') {
      found.push(['counter_regression', 'the assertion counter did not increase: a replayed or cloned key']);
    }
    if (device) {
      const [{ failures }] = await manager.query<{ failures: number }[]>(
        `SELECT count(*)::int AS failures FROM device_events
          WHERE device_id = $1 AND result = 'failure' AND created_at > now() - make_interval(mins => $2)`,
        [device.id, FAILURE_BURST.windowMinutes],
      );
      // Exactly at the threshold, so one burst is announced once.
      if (failures === FAILURE_BURST.count) {
        found.push(['failure_burst', `${failures} failed attempts within ${FAILURE_BURST.windowMinutes} minutes`]);
      }
    }
    const elsewhere = await manager.query<unknown[]>(
      `SELECT 1 FROM devices WHERE organization_id = $1 AND key_id = $2 AND app_id <> $3 LIMIT 1`,
      [app.organizationId, failure.keyId, app.appId],
    );
    if (elsewhere.length) {
      found.push(['key_seen_in_multiple_apps', 'this key is attested for another app of the organization']);
    }
    return found;
  }
}

/** The documented device event data. */
function deviceData(app: AttestingApp, device: DeviceFacts): Record<string, unknown> {
  return {
    key_id: device.keyId,
    device_id: device.clientDeviceId ?? '',
    risk_score: device.riskScore,
    jailbreak_detected: device.jailbreakDetected,
    device_model: device.deviceModel || 'unknown',
    os_version: device.osVersion || 'unknown',
    app_id: app.appId,
    bundle_id: app.bundleId,
  };
}
