import { describe, expect, it } from '@jest/globals';
import { TEST_EVENT, WEBHOOK_EVENTS, tiersReceiving } from './webhook-event-catalog.js';

describe('webhook event catalogue', () => {
  it('is the Events table and nothing else', () => {
    expect([...WEBHOOK_EVENTS].sort()).toEqual(
      [
        'attestation.anomaly',
        'device.attestation_failed',
        'device.attested.first',
        'device.high_risk',
        'device.new',
        'flag.created',
        'flag.deleted',
        'flag.updated',
        'subscription.changed',
        'subscription.expired',
        'subscription.refunded',
      ].sort(),
    );
    for (const name of [TEST_EVENT, 'risk_threshold_exceeded', 'device_blocked']) {
      expect(WEBHOOK_EVENTS).not.toContain(name);
    }
  });

  it('reaches paid plans only, and Enterprise alone for subscription.changed', () => {
    expect(tiersReceiving('device.new').sort()).toEqual([
      'basic',
      'enterprise',
      'enterprise_plus',
      'growth',
      'professional',
    ]);
    expect(tiersReceiving('subscription.expired')).not.toContain('free');
    expect(tiersReceiving('subscription.changed').sort()).toEqual(['enterprise', 'enterprise_plus']);
  });
});
