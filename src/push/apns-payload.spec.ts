import { describe, expect, it } from '@jest/globals';
import { APNS_MAX_PAYLOAD_BYTES, apnsOutcome, apnsPayload } from './apns-payload.js';

describe('APNs payloads', () => {
  it('puts title and body in the alert and the data beside aps', () => {
    expect(JSON.parse(apnsPayload({ title: 'T', body: 'B', data: { type: 'ticket_reply', ticketId: 'x' } }))).toEqual({
      aps: { alert: { title: 'T', body: 'B' }, sound: 'default' },
      type: 'ticket_reply',
      ticketId: 'x',
    });
  });

  it('shortens a long body to fit 4 KB, by whole characters and with an ellipsis', () => {
    for (const unit of ['a', 'é', '設', '😀', '"']) {
      const payload = apnsPayload({ title: 'Reply', body: unit.repeat(5000), data: { id: '1' } });
      expect(Buffer.byteLength(payload)).toBeLessThanOrEqual(APNS_MAX_PAYLOAD_BYTES);
      const body = (JSON.parse(payload) as { aps: { alert: { body: string } } }).aps.alert.body;
      expect(body.endsWith('…')).toBe(true);
      expect([...body.slice(0, -1)].every((character) => character === unit)).toBe(true);
      expect(Buffer.byteLength(payload)).toBeGreaterThan(APNS_MAX_PAYLOAD_BYTES - 100);
    }
  });

  it('leaves a payload that fits unchanged', () => {
    const body = 'x'.repeat(3000);
    expect(JSON.parse(apnsPayload({ title: 't', body, data: {} })).aps.alert.body).toBe(body);
  });

  it('maps APNs answers to what the service does', () => {
    expect(apnsOutcome(200, null)).toBe('sent');
    expect(apnsOutcome(410, 'Unregistered')).toBe('unregistered');
    expect(apnsOutcome(400, 'BadDeviceToken')).toBe('unregistered');
    expect(apnsOutcome(400, 'BadTopic')).toBe('failed');
    expect(apnsOutcome(403, 'ExpiredProviderToken')).toBe('renew_token');
    expect(apnsOutcome(429, 'TooManyRequests')).toBe('retry');
    expect(apnsOutcome(503, 'ServiceUnavailable')).toBe('retry');
    expect(apnsOutcome(413, 'PayloadTooLarge')).toBe('failed');
  });
});
