import { createHmac } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import { signWebhookBody, webhookBody, webhookHeaders } from './webhook-signing.js';

describe('webhookBody', () => {
  it('has exactly event, timestamp (ISO 8601 UTC) and data, sorted', () => {
    const body = webhookBody('device.new', new Date('2025-01-02T03:04:05.678Z'), { risk_score: 0, key_id: 'k' });
    expect(body).toBe(
      '{"data":{"key_id":"k","risk_score":0},"event":"device.new","timestamp":"2025-01-02T03:04:05.678Z"}',
    );
    expect(Object.keys(JSON.parse(body) as object)).toEqual(['data', 'event', 'timestamp']);
  });
});

describe('signatures', () => {
  const secret = 'whsec_test';
  const body = '{"data":{},"event":"flag.created","timestamp":"2025-01-01T00:00:00.000Z"}';

  it('is sha256= and the hex HMAC-SHA256 of the body keyed with the secret', () => {
    const expected = createHmac('sha256', secret).update(Buffer.from(body, 'utf8')).digest('hex');
    expect(signWebhookBody(secret, body)).toBe(`sha256=${expected}`);
  });

  it('changes with any byte of the body and with the secret', () => {
    const signature = signWebhookBody(secret, body);
    expect(signWebhookBody(secret, Buffer.from(body))).toBe(signature);
    expect(signWebhookBody(secret, `${body} `)).not.toBe(signature);
    expect(signWebhookBody('whsec_other', body)).not.toBe(signature);
  });

  it('sends the signature with the event, delivery id and attempt time headers', () => {
    const headers = webhookHeaders({
      secret,
      body,
      event: 'flag.created',
      deliveryId: 'd1',
      sentAt: new Date('2025-01-01T00:00:10.900Z'),
    });
    expect(headers).toMatchObject({
      'Content-Type': 'application/json',
      'X-Service-Event': 'flag.created',
      'X-Service-Delivery': 'd1',
      'X-Service-Timestamp': '1735689610',
      'X-Service-Signature': signWebhookBody(secret, body),
    });
  });
});
