import { createHmac } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import { verifiedStripeEvent } from './stripe-signature.js';

const SECRET = 'whsec_unit';
const NOW = 1_750_000_000;
const BODY = Buffer.from('{"id":"evt_1","type":"customer.subscription.updated"}');

function sign(body: Buffer, timestamp: number, secret = SECRET): string {
  return createHmac('sha256', secret)
    .update(`${timestamp}.${body.toString('utf8')}`)
    .digest('hex');
}

describe('verifiedStripeEvent (Stripe SDK verification)', () => {
  it('accepts a v1 HMAC of "t.body" within five minutes, among several signatures and a v0', () => {
    const header = `t=${NOW - 299},v0=ignored,v1=${'0'.repeat(64)},v1=${sign(BODY, NOW - 299)}`;
    expect(verifiedStripeEvent(BODY, header, SECRET, NOW)).toEqual({
      valid: true,
      event: { id: 'evt_1', type: 'customer.subscription.updated' },
    });
  });

  it.each([
    ['no header', undefined, /missing/],
    ['no timestamp', `v1=${sign(BODY, NOW)}`, /timestamp/],
    ['a non-numeric timestamp', `t=soon,v1=${sign(BODY, NOW)}`, /timestamp/],
    ['no v1', `t=${NOW}`, /v1/],
    ['a stale timestamp', `t=${NOW - 301},v1=${sign(BODY, NOW - 301)}`, /tolerance/],
    ['a timestamp too far in the future', `t=${NOW + 301},v1=${sign(BODY, NOW + 301)}`, /tolerance/],
    ['another secret', `t=${NOW},v1=${sign(BODY, NOW, 'whsec_other')}`, /matches/],
    ['a signature of another timestamp', `t=${NOW},v1=${sign(BODY, NOW - 1)}`, /matches/],
    ['a truncated signature', `t=${NOW},v1=${sign(BODY, NOW).slice(0, 32)}`, /matches/],
  ])('refuses %s', (_label, header, reason) => {
    const check = verifiedStripeEvent(BODY, header, SECRET, NOW);
    expect(check.valid).toBe(false);
    expect(check.valid ? '' : check.reason).toMatch(reason);
  });

  it('signs the raw bytes: a re-serialised body does not verify', () => {
    const header = `t=${NOW},v1=${sign(BODY, NOW)}`;
    const reserialised = Buffer.from(JSON.stringify(JSON.parse(BODY.toString('utf8')), null, 1));
    expect(verifiedStripeEvent(reserialised, header, SECRET, NOW).valid).toBe(false);
  });
});

describe('verifiedStripeEvent on a signed body that is not JSON', () => {
  it('refuses it with a reason instead of throwing', () => {
    const body = Buffer.from('not json');
    const check = verifiedStripeEvent(body, `t=${NOW},v1=${sign(body, NOW)}`, SECRET, NOW);
    expect(check).toEqual({ valid: false, reason: 'the body is not a signed JSON event' });
  });
});
