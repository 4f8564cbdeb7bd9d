import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { createOrg, orgWithMember, type TestOrg } from '../factories/identity.js';
import { stripeSignature, subscriptionEvent, type SubscriptionEventOptions } from '../factories/organization.js';
import { startTestApp, type TestApp } from '../harness/test-app.js';
import { shiftByMonths } from '../../src/usage/billing-period.js';
import { startFakeStripe, stripeError, type FakeStripe } from '../support/fake-stripe.js';

const WEBHOOK = '/api/v1/billing/webhook';
const SECRET = 'whsec_test_0123456789abcdef';

describe('Stripe billing webhook', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ STRIPE_WEBHOOK_SECRET: SECRET });
  });
  afterAll(async () => {
    await t.close();
  });

  function deliver(event: object, options: { secret?: string; timestamp?: number; signature?: string } = {}) {
    const body = JSON.stringify(event);
    const signature = options.signature ?? stripeSignature(body, options.secret ?? SECRET, options.timestamp);
    return t.http().post(WEBHOOK).set('Content-Type', 'application/json').set('Stripe-Signature', signature).send(body);
  }

  async function organization(org: TestOrg) {
    const [row] = await t.sql<{
      service_tier: string;
      provider_customer_id: string | null;
      provider_subscription_id: string | null;
      current_period_end: Date | null;
    }>(
      `SELECT service_tier, provider_customer_id, provider_subscription_id, current_period_end FROM organizations WHERE id = $1`,
      [org.id],
    );
    return row;
  }

  function event(org: TestOrg, options: SubscriptionEventOptions = {}) {
    return subscriptionEvent({ organizationId: org.id, customerId: `cus_${org.id.slice(0, 8)}`, ...options });
  }

  it('applies a created subscription: tier from the price, period end and provider ids, audited', async () => {
    const org = await createOrg(t);
    const periodEnd = Math.floor(Date.now() / 1000) + 30 * 86_400;
    const created = event(org, {
      priceTier: 'professional',
      subscriptionId: 'sub_created_1',
      currentPeriodEnd: periodEnd,
    });
    const response = await deliver(created).expect(200);
    expect(response.body).toEqual({ received: true, outcome: 'applied' });
    expect(await organization(org)).toEqual({
      service_tier: 'professional',
      provider_customer_id: `cus_${org.id.slice(0, 8)}`,
      provider_subscription_id: 'sub_created_1',
      current_period_end: new Date(periodEnd * 1000),
    });
    const [audit] = await t.sql(
      `SELECT actor_email, action, resource_id, metadata FROM audit_logs WHERE organization_id = $1`,
      [org.id],
    );
    expect(audit).toEqual({
      actor_email: null,
      action: 'billing.subscription_updated',
      resource_id: 'sub_created_1',
      metadata: {
        eventId: created.id,
        eventType: 'customer.subscription.created',
        status: 'active',
        tier: { from: 'free', to: 'professional' },
      },
    });
  });

  it("starts the usage period on the subscription's renewal day, clamped to the month's end", async () => {
    const { org, agent } = await orgWithMember(t);
    const now = new Date();
    // This month's last day, 23:59 UTC: the end of a cycle that renews on the 31st.
    const end = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 0, 23, 59));
    const anchor = Date.UTC(2025, 0, 31, 23, 59) / 1000;
    await deliver(
      event(org, { priceTier: 'basic', currentPeriodEnd: end.getTime() / 1000, billingCycleAnchor: anchor }),
    ).expect(200);
    const usage = (await agent.get('/api/v1/tenants/me/usage').expect(200)).body;
    expect(usage).toMatchObject({
      billingPeriodStart: shiftByMonths(end, -1, 31).toISOString(),
      billingPeriodEnd: end.toISOString(),
    });
    // The period starts on the previous month's last day at most, never spilling into this month.
    expect(new Date(usage.billingPeriodStart).getUTCMonth()).toBe((end.getUTCMonth() + 11) % 12);
  });

  it('finds the organization by its provider customer when the metadata does not name it', async () => {
    const org = await createOrg(t, { tier: 'basic' });
    await t.sql(
      `UPDATE organizations SET provider_customer_id = 'cus_lookup', provider_subscription_id = 'sub_lookup' WHERE id = $1`,
      [org.id],
    );
    const updated = subscriptionEvent({
      type: 'customer.subscription.updated',
      customerId: 'cus_lookup',
      subscriptionId: 'sub_lookup',
      subscriptionTier: 'enterprise',
    });
    await deliver(updated).expect(200);
    expect((await organization(org)).service_tier).toBe('enterprise');
  });

  it('moves a deleted subscription back to Free, keeping the customer for the portal', async () => {
    const org = await createOrg(t);
    await deliver(
      event(org, { priceTier: 'basic', subscriptionId: 'sub_gone', created: Math.floor(Date.now() / 1000) - 60 }),
    ).expect(200);
    const deleted = event(org, {
      type: 'customer.subscription.deleted',
      subscriptionId: 'sub_gone',
      status: 'canceled',
      priceTier: 'basic',
    });
    expect((await deliver(deleted).expect(200)).body.outcome).toBe('applied');
    expect(await organization(org)).toEqual({
      service_tier: 'free',
      provider_customer_id: `cus_${org.id.slice(0, 8)}`,
      provider_subscription_id: null,
      current_period_end: null,
    });
  });

  it('applies each event id once, however often Stripe redelivers it', async () => {
    const org = await createOrg(t);
    const now = Math.floor(Date.now() / 1000);
    const upgrade = event(org, { priceTier: 'basic', created: now - 120 });
    await deliver(upgrade).expect(200);
    const change = event(org, { type: 'customer.subscription.updated', priceTier: 'professional', created: now - 60 });
    await deliver(change).expect(200);
    const again = await deliver(upgrade).expect(200);
    expect(again.body.outcome).toBe('duplicate');
    expect((await organization(org)).service_tier).toBe('professional');
    const simultaneous = event(org, { type: 'customer.subscription.updated', priceTier: 'enterprise', created: now });
    const results = await Promise.all([deliver(simultaneous), deliver(simultaneous), deliver(simultaneous)]);
    expect(results.map((r) => r.body.outcome as string).sort()).toEqual(['applied', 'duplicate', 'duplicate']);
    const [row] = await t.sql<{ n: number }>(`SELECT count(*)::int AS n FROM billing_events WHERE event_id = $1`, [
      simultaneous.id,
    ]);
    expect(row.n).toBe(1);
  });

  it('records but does not apply an event older than one already applied', async () => {
    const org = await createOrg(t);
    const now = Math.floor(Date.now() / 1000);
    await deliver(
      event(org, { type: 'customer.subscription.updated', priceTier: 'professional', created: now }),
    ).expect(200);
    const late = await deliver(
      event(org, { type: 'customer.subscription.updated', priceTier: 'basic', created: now - 30 }),
    ).expect(200);
    expect(late.body.outcome).toBe('stale');
    expect((await organization(org)).service_tier).toBe('professional');
  });

  it('does not downgrade when a replaced subscription ends', async () => {
    const org = await createOrg(t);
    const now = Math.floor(Date.now() / 1000);
    await deliver(event(org, { priceTier: 'professional', subscriptionId: 'sub_new', created: now - 10 })).expect(200);
    const oldEnds = event(org, {
      type: 'customer.subscription.deleted',
      subscriptionId: 'sub_old',
      status: 'canceled',
      created: now,
    });
    expect((await deliver(oldEnds).expect(200)).body.outcome).toBe('stale');
    expect(await organization(org)).toMatchObject({
      service_tier: 'professional',
      provider_subscription_id: 'sub_new',
    });
  });

  it('keeps the plan of a subscription whose first payment is still incomplete', async () => {
    const org = await createOrg(t);
    await deliver(event(org, { status: 'incomplete', priceTier: 'enterprise', subscriptionId: 'sub_wait' })).expect(
      200,
    );
    expect(await organization(org)).toMatchObject({ service_tier: 'free', provider_subscription_id: 'sub_wait' });
  });

  it('acknowledges events it does not handle and subscriptions of no known organization', async () => {
    const ignored = await deliver({
      id: 'evt_invoice_1',
      type: 'invoice.paid',
      created: 1,
      data: { object: {} },
    }).expect(200);
    expect(ignored.body.outcome).toBe('ignored');
    const unmatched = await deliver(subscriptionEvent({ customerId: 'cus_nobody', priceTier: 'basic' })).expect(200);
    expect(unmatched.body.outcome).toBe('unmatched');
  });

  it.each([
    ['a signature made with another secret', { secret: 'whsec_wrong' }],
    ['a timestamp older than five minutes', { timestamp: Math.floor(Date.now() / 1000) - 301 }],
    ['a timestamp from the future', { timestamp: Math.floor(Date.now() / 1000) + 600 }],
    ['a header without v1', { signature: `t=${Math.floor(Date.now() / 1000)}` }],
    ['garbage', { signature: 'nonsense' }],
  ])('refuses %s with 400 and changes nothing', async (_label, options) => {
    const org = await createOrg(t);
    const response = await deliver(event(org, { priceTier: 'enterprise' }), options).expect(400);
    expect(response.body.code).toBe('bad_request');
    expect(response.body.error).toMatch(/Stripe-Signature/);
    expect((await organization(org)).service_tier).toBe('free');
  });

  it('refuses a body altered after signing and a missing header with 400', async () => {
    const org = await createOrg(t);
    const body = JSON.stringify(event(org, { priceTier: 'basic' }));
    const signature = stripeSignature(body, SECRET);
    await t
      .http()
      .post(WEBHOOK)
      .set('Content-Type', 'application/json')
      .set('Stripe-Signature', signature)
      .send(body.replace('"basic"', '"enterprise"'))
      .expect(400);
    await t.http().post(WEBHOOK).set('Content-Type', 'application/json').send(body).expect(400);
    expect((await organization(org)).service_tier).toBe('free');
  });

  it('unlocks the portal after the upgrade: 503 here since no Stripe API key is configured', async () => {
    const { org, agent } = await orgWithMember(t, { role: 'admin' });
    await agent.post('/api/v1/org/billing/portal-session').expect(402);
    await deliver(event(org, { priceTier: 'basic' })).expect(200);
    await agent.post('/api/v1/org/billing/portal-session').expect(503);
    const summary = await agent.get('/api/v1/org/billing').expect(200);
    expect(summary.body).toMatchObject({
      plan: 'Pro',
      planRawValue: 'basic',
      madLimit: 25_000,
      providerCustomerId: `cus_${org.id.slice(0, 8)}`,
    });
  });
});

describe('Stripe billing webhook without STRIPE_WEBHOOK_SECRET', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  it('answers 503', async () => {
    const body = JSON.stringify(subscriptionEvent());
    const response = await t
      .http()
      .post(WEBHOOK)
      .set('Content-Type', 'application/json')
      .set('Stripe-Signature', stripeSignature(body, SECRET))
      .send(body)
      .expect(503);
    expect(response.body.code).toBe('service_unavailable');
  });
});

describe('Stripe API through the official SDK (a fake Stripe on 127.0.0.1)', () => {
  let t: TestApp;
  let stripe: FakeStripe;
  const KEY = 'sk_test_fake_0123456789';

  beforeAll(async () => {
    stripe = await startFakeStripe();
    t = await startTestApp({ STRIPE_SECRET_KEY: KEY, STRIPE_WEBHOOK_SECRET: SECRET, STRIPE_API_URL: stripe.url });
  });
  afterEach(() => {
    stripe.behave(null);
  });
  afterAll(async () => {
    await t.close();
    await stripe.close();
  });

  /** An organization on a paid plan through a signed subscription event, with its Admin signed in. */
  async function subscribed(role: 'admin' | 'owner' = 'admin') {
    const { org, agent } = await orgWithMember(t, { role });
    const customerId = `cus_${org.id.slice(0, 8)}`;
    const subscriptionId = `sub_${org.id.slice(0, 8)}`;
    const body = JSON.stringify(
      subscriptionEvent({ organizationId: org.id, customerId, subscriptionId, priceTier: 'professional' }),
    );
    await t
      .http()
      .post(WEBHOOK)
      .set('Content-Type', 'application/json')
      .set('Stripe-Signature', stripeSignature(body, SECRET))
      .send(body)
      .expect(200);
    return { org, agent, customerId, subscriptionId };
  }

  it('still answers 402 before calling Stripe for an organization that never upgraded', async () => {
    const { agent } = await orgWithMember(t, { role: 'owner' });
    const before = stripe.calls.length;
    expect((await agent.post('/api/v1/org/billing/portal-session').expect(402)).body.code).toBe('payment_required');
    expect(stripe.calls.length).toBe(before);
  });

  it('opens a billing portal session for the customer, returning to the dashboard', async () => {
    const { agent, customerId } = await subscribed();
    const response = await agent.post('/api/v1/org/billing/portal-session').expect(200);
    expect(response.body).toEqual({ url: `https://billing.stripe.com/p/session/test_${customerId}` });
    const call = stripe.calls.at(-1)!;
    expect(call).toMatchObject({
      method: 'POST',
      path: '/v1/billing_portal/sessions',
      form: { customer: customerId, return_url: 'http://127.0.0.1:3000/settings/billing' },
      authorization: `Bearer ${KEY}`,
    });
    // The SDK sends an idempotency key, so its retry of a lost answer cannot open two sessions.
    expect(call.idempotencyKey).toEqual(expect.any(String));
  });

  it('answers 503 without Stripe details when Stripe refuses, and never leaks the key', async () => {
    const { agent } = await subscribed();
    stripe.behave(() => stripeError(400, 'No such customer: cus_x; a configuration detail'));
    const response = await agent.post('/api/v1/org/billing/portal-session').expect(503);
    expect(response.body.code).toBe('service_unavailable');
    expect(JSON.stringify(response.body)).not.toMatch(/cus_x|sk_test/);
  });

  it('cancels the subscription at Stripe when the organization is deleted', async () => {
    const { agent, subscriptionId } = await subscribed('owner');
    await agent.delete('/api/v1/org').expect(204);
    expect(stripe.calls.filter((call) => call.method === 'DELETE').map((call) => call.path)).toContain(
      `/v1/subscriptions/${subscriptionId}`,
    );
  });

  it('treats a subscription Stripe no longer knows (404) as cancelled, and deletes the organization', async () => {
    const { org, agent } = await subscribed('owner');
    stripe.behave((call) => (call.method === 'DELETE' ? stripeError(404, 'No such subscription') : undefined));
    await agent.delete('/api/v1/org').expect(204);
    expect(await t.sql(`SELECT 1 FROM organizations WHERE id = $1`, [org.id])).toEqual([]);
  });

  it('keeps the organization when Stripe cannot cancel (503), so nothing is left half-done', async () => {
    const { org, agent } = await subscribed('owner');
    stripe.behave((call) =>
      call.method === 'DELETE' ? stripeError(500, 'Stripe is having a bad day', 'api_error') : undefined,
    );
    expect((await agent.delete('/api/v1/org').expect(503)).body.code).toBe('service_unavailable');
    expect(await t.sql(`SELECT 1 FROM organizations WHERE id = $1`, [org.id])).toHaveLength(1);
  });
});
