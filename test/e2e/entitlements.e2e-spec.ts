import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { SubscriptionClaims } from '../../src/entitlements/subscription-claims.js';
import type { WebhookEventName } from '../../src/webhooks/webhook-event-catalog.js';
import { createApiKey, orgWithMember, type TestOrg } from '../factories/identity.js';
import { subscribedReceiver } from '../factories/webhooks.js';
import { startTestApp, type HttpClient, type TestApp } from '../harness/test-app.js';
import { eventually, sleep, type WebhookReceiver, WebhookReceivers } from '../support/webhook-receiver.js';
import { trustOrganizationId } from '../../src/common/access/tenant-id.js';

const SUBSCRIPTION_EVENTS: WebhookEventName[] = [
  'subscription.changed',
  'subscription.expired',
  'subscription.refunded',
];

interface Customer {
  org: TestOrg;
  agent: HttpClient;
  key: string;
}

describe('entitlements', () => {
  let t: TestApp;
  const receivers = new WebhookReceivers();

  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t.close();
    await receivers.closeAll();
  });

  async function customer(tier = 'enterprise'): Promise<Customer> {
    const { org, agent } = await orgWithMember(t, { tier });
    return { org, agent, key: await createApiKey(t, org, ['entitlements:write']) };
  }

  function listen(who: Customer, events: readonly string[] = SUBSCRIPTION_EVENTS): Promise<WebhookReceiver> {
    return subscribedReceiver(receivers, who.agent, events);
  }

  function ingest(who: Customer, event: Record<string, unknown>) {
    return t.http().post('/api/v1/entitlements/events').set('Authorization', `Bearer ${who.key}`).send(event);
  }

  let sequence = 0;
  function event(overrides: Record<string, unknown> = {}): Record<string, unknown> {
    return {
      event_id: `evt_${++sequence}`,
      subject_id: 'user-42',
      tier: 'premium',
      status: 'active',
      interval: 'month',
      source: 'app_store',
      product_id: 'premium.monthly',
      expires_at: '2030-01-01T00:00:00.000Z',
      source_subscription_id: '2000000123',
      environment: 'production',
      auto_renew: true,
      ...overrides,
    };
  }

  function received(receiver: WebhookReceiver) {
    return receiver.received.map((request) => {
      const body = JSON.parse(request.body) as { event: string; data: Record<string, string> };
      return { event: body.event, data: body.data };
    });
  }

  describe('ingestion', () => {
    it('needs an API key with entitlements:write', async () => {
      const who = await customer();
      const body = event();
      await t.http().post('/api/v1/entitlements/events').send(body).expect(401);
      await who.agent.post('/api/v1/entitlements/events').send(body).expect(401);
      const readOnly = await createApiKey(t, who.org, ['org:read']);
      const refused = await t
        .http()
        .post('/api/v1/entitlements/events')
        .set('Authorization', `Bearer ${readOnly}`)
        .send(body)
        .expect(403);
      expect(refused.body.error).toContain('entitlements:write');
      await ingest(who, body).expect(200);
    });

    it('stores the subject’s entitlement and answers a redelivery as a duplicate', async () => {
      const who = await customer();
      const body = event();
      const first = await ingest(who, body).expect(200);
      expect(first.body).toEqual({
        event_id: body.event_id,
        duplicate: false,
        entitlement: {
          subject_id: 'user-42',
          tier: 'premium',
          status: 'active',
          interval: 'month',
          source: 'app_store',
          product_id: 'premium.monthly',
          expires_at: '2030-01-01T00:00:00.000Z',
          source_subscription_id: '2000000123',
          environment: 'production',
          auto_renew: true,
          updated_at: expect.any(String),
        },
      });
      const again = await ingest(who, body).expect(200);
      expect(again.body).toEqual({ ...first.body, duplicate: true });

      const conflicting = await ingest(who, { ...body, status: 'expired' }).expect(409);
      expect(conflicting.body.code).toBe('conflict');
      const [{ events }] = await t.sql<{ events: number }>(
        `SELECT count(*)::int AS events FROM entitlement_events WHERE organization_id = $1`,
        [who.org.id],
      );
      expect(events).toBe(1);
    });

    it('keeps organizations apart: the same event id and subject in two organizations are two entitlements', async () => {
      const [one, two] = [await customer(), await customer()];
      const body = event({ subject_id: 'shared-subject' });
      await ingest(one, body).expect(200);
      const other = await ingest(two, { ...body, tier: 'basic' }).expect(200);
      expect(other.body).toMatchObject({ duplicate: false, entitlement: { tier: 'basic' } });
      const claims = t.app.get(SubscriptionClaims);
      expect(await claims.claimFor(trustOrganizationId(one.org.id), 'shared-subject')).toMatchObject({
        tier: 'premium',
      });
      expect(await claims.claimFor(trustOrganizationId(two.org.id), 'shared-subject')).toMatchObject({ tier: 'basic' });
    });

    it('treats each event as the whole state: fields left out become empty', async () => {
      const who = await customer();
      await ingest(who, event()).expect(200);
      const bare = await ingest(who, { event_id: 'bare-1', subject_id: 'user-42', status: 'paused' }).expect(200);
      expect(bare.body.entitlement).toMatchObject({
        tier: '',
        status: 'paused',
        interval: '',
        source: '',
        product_id: '',
        expires_at: null,
        source_subscription_id: '',
        environment: 'production',
        auto_renew: false,
      });
      await ingest(who, event({ expires_at: '' })).expect(200);
    });

    it.each([
      ['an unknown status', { status: 'cancelled' }, 'status'],
      ['an unknown interval', { interval: 'fortnight' }, 'interval'],
      ['an unknown environment', { environment: 'staging' }, 'environment'],
      ['a bad expiry', { expires_at: 'next tuesday' }, 'expires_at'],
      ['auto_renew as a string', { auto_renew: 'true' }, 'auto_renew'],
      ['no event_id', { event_id: undefined }, 'event_id'],
      ['no subject_id', { subject_id: '' }, 'subject_id'],
      ['an unknown field', { plan: 'gold' }, 'plan'],
    ])('refuses %s with 422 naming the field', async (_case, overrides, field) => {
      const who = await customer();
      const refused = await ingest(who, event(overrides)).expect(422);
      expect(refused.body.fields.map((entry: { field: string }) => entry.field)).toContain(field);
    });
  });

  describe('subscription webhooks', () => {
    it('fires subscription.changed on Enterprise only on material changes, never for redeliveries', async () => {
      const who = await customer('enterprise');
      const receiver = await listen(who);
      const base = event({ subject_id: 'sub-material' });
      await ingest(who, base).expect(200);
      await ingest(who, base).expect(200);
      // A new event id with nothing material changed (only the source's transaction id).
      await ingest(who, { ...base, event_id: 'same-state', source_subscription_id: '2000000999' }).expect(200);
      const changes: [string, Record<string, unknown>][] = [
        ['tier', { tier: 'premium_plus' }],
        ['interval', { interval: 'year' }],
        ['expiry', { expires_at: '2031-06-01T12:00:00.000Z' }],
        ['auto-renew', { auto_renew: false }],
        ['product', { product_id: 'premium.yearly' }],
        ['status', { status: 'grace_period' }],
      ];
      let state = { ...base };
      for (const [name, change] of changes) {
        state = { ...state, ...change, event_id: `change-${name}` };
        await ingest(who, state).expect(200);
      }

      await eventually(() => receiver.received.length === 7);
      await sleep(1_200);
      const events = received(receiver);
      expect(events).toHaveLength(7);
      expect(events.every((entry) => entry.event === 'subscription.changed')).toBe(true);
      expect(events.map((entry) => entry.data.event_id).sort()).toEqual(
        [base.event_id as string, ...changes.map(([name]) => `change-${name}`)].sort(),
      );
      const last = events.find((entry) => entry.data.event_id === 'change-status')!;
      expect(last.data).toEqual({
        subject_id: 'sub-material',
        tier: 'premium_plus',
        status: 'grace_period',
        interval: 'year',
        source: 'app_store',
        product_id: 'premium.yearly',
        expires_at: '2031-06-01T12:00:00.000Z',
        source_subscription_id: '2000000123',
        environment: 'production',
        auto_renew: 'false',
        event_id: 'change-status',
      });
    });

    it('fires subscription.expired when the status becomes expired or revoked, and refunded on a refund', async () => {
      const who = await customer('enterprise');
      const receiver = await listen(who);
      await ingest(who, event({ subject_id: 'a', event_id: 'a-1' })).expect(200);
      await ingest(who, event({ subject_id: 'a', event_id: 'a-2', status: 'expired', expires_at: null })).expect(200);
      // Already expired: a later event in the same status does not announce it again.
      await ingest(
        who,
        event({ subject_id: 'a', event_id: 'a-3', status: 'expired', expires_at: null, tier: 'basic' }),
      ).expect(200);
      await ingest(who, event({ subject_id: 'b', event_id: 'b-1' })).expect(200);
      await ingest(who, event({ subject_id: 'b', event_id: 'b-2', status: 'revoked' })).expect(200);
      await ingest(who, event({ subject_id: 'c', event_id: 'c-1' })).expect(200);
      await ingest(who, event({ subject_id: 'c', event_id: 'c-2', status: 'refunded', auto_renew: false })).expect(200);

      await eventually(() => receiver.received.length === 10);
      await sleep(1_200);
      const byEvent = (name: string) =>
        received(receiver)
          .filter((entry) => entry.event === name)
          .map((entry) => entry.data.event_id)
          .sort();
      expect(byEvent('subscription.expired')).toEqual(['a-2', 'b-2']);
      expect(byEvent('subscription.refunded')).toEqual(['c-2']);
      expect(byEvent('subscription.changed')).toEqual(['a-1', 'a-2', 'a-3', 'b-1', 'b-2', 'c-1', 'c-2']);
      const expired = received(receiver).find(
        (entry) => entry.event === 'subscription.expired' && entry.data.event_id === 'a-2',
      )!;
      expect(expired.data).toMatchObject({ status: 'expired', expires_at: '', auto_renew: 'true' });
    });

    it('does not fire subscription.changed below Enterprise, but still expiry and refunds', async () => {
      const who = await customer('professional');
      // Pro cannot subscribe to subscription.changed (400); an endpoint kept from an Enterprise
      // past still holds it, as the row below does, and is not sent it either.
      const receiver = await listen(
        who,
        SUBSCRIPTION_EVENTS.filter((event) => event !== 'subscription.changed'),
      );
      await t.sql(`UPDATE webhook_endpoints SET events = $2 WHERE organization_id = $1`, [
        who.org.id,
        SUBSCRIPTION_EVENTS,
      ]);
      await ingest(who, event({ subject_id: 'p', event_id: 'p-1' })).expect(200);
      await ingest(who, event({ subject_id: 'p', event_id: 'p-2', tier: 'other' })).expect(200);
      await ingest(who, event({ subject_id: 'p', event_id: 'p-3', status: 'expired' })).expect(200);
      await ingest(who, event({ subject_id: 'p', event_id: 'p-4', status: 'refunded' })).expect(200);

      await eventually(() => receiver.received.length === 2);
      await sleep(1_200);
      expect(
        received(receiver)
          .map((entry) => `${entry.event} ${entry.data.event_id}`)
          .sort(),
      ).toEqual(['subscription.expired p-3', 'subscription.refunded p-4']);
    });

    it('applies concurrent events of one subject one at a time', async () => {
      const who = await customer('enterprise');
      const receiver = await listen(who);
      const results = await Promise.all(
        Array.from({ length: 6 }, (_, i) => ingest(who, event({ subject_id: 'racer', event_id: `race-${i}` }))),
      );
      expect(results.map((result) => result.status)).toEqual(Array(6).fill(200));
      // Six identical states: only the first is a change.
      await eventually(() => receiver.received.length >= 1);
      await sleep(1_200);
      expect(receiver.received).toHaveLength(1);
    });
  });

  describe('subscription claim', () => {
    it('reads the claim from the stored entitlement, expires_at in epoch seconds', async () => {
      const who = await customer('basic');
      const claims = t.app.get(SubscriptionClaims);
      expect(await claims.claimFor(trustOrganizationId(who.org.id), 'claim-subject')).toEqual({ status: 'none' });
      expect(await claims.claimFor(trustOrganizationId(who.org.id), null)).toEqual({ status: 'none' });

      await ingest(who, event({ subject_id: 'claim-subject', expires_at: '2030-01-01T00:00:00Z' })).expect(200);
      expect(await claims.claimFor(trustOrganizationId(who.org.id), 'claim-subject')).toEqual({
        subject_id: 'claim-subject',
        status: 'active',
        tier: 'premium',
        interval: 'month',
        product_id: 'premium.monthly',
        source: 'app_store',
        environment: 'production',
        expires_at: 1893456000,
        auto_renew: true,
      });
      const other = await customer('basic');
      expect(await claims.claimFor(trustOrganizationId(other.org.id), 'claim-subject')).toEqual({ status: 'none' });

      await ingest(
        who,
        event({ subject_id: 'claim-subject', status: 'expired', expires_at: null, auto_renew: false }),
      ).expect(200);
      expect(await claims.claimFor(trustOrganizationId(who.org.id), 'claim-subject')).toMatchObject({
        status: 'expired',
        expires_at: null,
        auto_renew: false,
      });
    });
  });
});
