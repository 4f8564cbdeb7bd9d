import { Injectable } from '@nestjs/common';
import { HandlesDomainEvents, type DomainEventSubscriber } from '../common/domain-events/domain-events.js';
import type { AttestingApp, DeviceDomainEvent, DeviceFacts } from '../devices/device-domain-events.js';
import type { WebhookEventName } from './webhook-event-catalog.js';
import { WebhookOutboxRepository } from './webhook-outbox.repository.js';

/**
 * Turns the device domain events into webhook deliveries, in the publisher's unit of work: which
 * webhook events each one is, and their documented `data`. Nothing is decided here; what is not
 * subscribed to is not written, and a failure never fails the publisher (a savepoint).
 */
@Injectable()
@HandlesDomainEvents()
export class DeviceEventDeliveries implements DomainEventSubscriber<DeviceDomainEvent> {
  readonly handles = ['DeviceRegistered', 'HighRiskDevice', 'AttestationFailed', 'DeviceAnomalyDetected'] as const;

  constructor(private readonly outbox: WebhookOutboxRepository) {}

  /** The webhook events `receive` may write for a domain event of `type` (`webhooksOf`'s names). */
  webhooksFor(type: DeviceDomainEvent['type']): readonly WebhookEventName[] {
    return WEBHOOKS_OF[type];
  }

  /** One query per app (a publication is about one app) for what its endpoints listen to, then the inserts. */
  async receive(events: readonly DeviceDomainEvent[]): Promise<void> {
    await this.outbox.guarded(async () => {
      const listening = new Map<string, Set<WebhookEventName>>();
      for (const event of events) {
        const { organizationId, appId } = event.app;
        let subscribed = listening.get(appId);
        if (!subscribed) {
          subscribed = await this.outbox.subscribedEvents(organizationId, { appId });
          listening.set(appId, subscribed);
        }
        for (const [name, data] of webhooksOf(event)) {
          if (subscribed.has(name)) await this.outbox.insert(organizationId, name, data, { appId });
        }
      }
    }, undefined);
  }
}

/** The webhook events each device domain event is delivered as (`webhooksOf` gives their `data`). */
const WEBHOOKS_OF = {
  DeviceRegistered: ['device.new', 'device.attested.first'],
  HighRiskDevice: ['device.high_risk'],
  AttestationFailed: ['device.attestation_failed'],
  DeviceAnomalyDetected: ['attestation.anomaly'],
} as const satisfies Record<DeviceDomainEvent['type'], readonly WebhookEventName[]>;

/** The webhook events a domain event is delivered as, with their `data`. */
function webhooksOf(event: DeviceDomainEvent): [WebhookEventName, Record<string, unknown>][] {
  const data = deviceData(event.app, event.device);
  switch (event.type) {
    case 'DeviceRegistered': {
      const [created, first] = WEBHOOKS_OF.DeviceRegistered;
      return [
        [created, data],
        [first, data],
      ];
    }
    case 'HighRiskDevice':
      return [[WEBHOOKS_OF.HighRiskDevice[0], { ...data, threshold: event.threshold }]];
    case 'AttestationFailed':
      return [[WEBHOOKS_OF.AttestationFailed[0], { ...data, error_code: event.errorCode }]];
    case 'DeviceAnomalyDetected':
      return [
        [
          WEBHOOKS_OF.DeviceAnomalyDetected[0],
          {
            ...data,
            error_code: event.errorCode,
            pattern: event.pattern,
            detail: event.detail,
            ...(event.alert && {
              observed: event.alert.observed,
              rule: {
                id: event.alert.rule.id,
                name: event.alert.rule.name,
                app_id: event.alert.rule.appId,
                condition: {
                  type: event.alert.rule.condition.type,
                  threshold: event.alert.rule.condition.threshold,
                  window_minutes: event.alert.rule.condition.windowMinutes,
                },
                cooldown_minutes: event.alert.rule.cooldownMinutes,
              },
            }),
          },
        ],
      ];
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
    bundle_id: app.bundleId ?? '',
  };
}
