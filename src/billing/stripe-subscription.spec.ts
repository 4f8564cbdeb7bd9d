import { describe, expect, it } from '@jest/globals';
import { subscriptionChange, type SubscriptionEffect, type SubscriptionEventType } from './stripe-subscription.js';

const ORG = '3f1c2a9e-6b1d-4c55-9f0e-2d7c1b8a4e60';

function subscription(overrides: Record<string, unknown> = {}) {
  return {
    id: 'sub_1',
    customer: 'cus_1',
    status: 'active',
    metadata: { organization_id: ORG },
    items: { data: [{ price: { metadata: { tier: 'professional' } }, current_period_end: 1_760_000_000 }] },
    ...overrides,
  };
}

describe('subscriptionChange', () => {
  it('reads ids, organization, tier and period end (from the items in newer API versions)', () => {
    expect(subscriptionChange('customer.subscription.created', subscription())).toEqual({
      subscriptionId: 'sub_1',
      customerId: 'cus_1',
      organizationId: ORG,
      tier: 'professional',
      currentPeriodEnd: new Date(1_760_000_000_000),
      anchorDay: null,
      status: 'active',
      effect: 'grant',
    });
  });

  it('reads the day of month the subscription renews on from billing_cycle_anchor', () => {
    const anchor = Date.UTC(2027, 0, 31, 9, 30) / 1000;
    expect(
      subscriptionChange('customer.subscription.updated', subscription({ billing_cycle_anchor: anchor })),
    ).toMatchObject({ anchorDay: 31 });
    expect(
      subscriptionChange('customer.subscription.updated', subscription({ billing_cycle_anchor: 'x' }))?.anchorDay,
    ).toBeNull();
  });

  it('prefers the subscription metadata tier, and knows display names and an expanded product', () => {
    expect(
      subscriptionChange('customer.subscription.updated', subscription({ metadata: { tier: 'Enterprise' } }))?.tier,
    ).toBe('enterprise');
    const viaProduct = subscription({
      metadata: {},
      items: { data: [{ price: { metadata: {}, product: { id: 'prod_1', metadata: { tier: 'pro' } } } }] },
    });
    expect(subscriptionChange('customer.subscription.updated', viaProduct)?.tier).toBe('basic');
    expect(subscriptionChange('customer.subscription.updated', subscription({ items: { data: [] } }))?.tier).toBeNull();
  });

  const cases: [SubscriptionEventType, string, SubscriptionEffect][] = [
    ['customer.subscription.updated', 'trialing', 'grant'],
    ['customer.subscription.updated', 'past_due', 'grant'],
    ['customer.subscription.updated', 'incomplete', 'track'],
    ['customer.subscription.updated', 'canceled', 'end'],
    ['customer.subscription.updated', 'unpaid', 'end'],
    ['customer.subscription.deleted', 'active', 'end'],
  ];
  it.each(cases)('%s with status %s means %s', (type, status, effect) => {
    expect(subscriptionChange(type, subscription({ status }))?.effect).toBe(effect);
  });

  it('ignores an organization id that is not a UUID, expands the customer object, refuses non-subscriptions', () => {
    const change = subscriptionChange(
      'customer.subscription.updated',
      subscription({ metadata: { organization_id: 'acme' }, customer: { id: 'cus_9' } }),
    );
    expect(change).toMatchObject({ organizationId: null, customerId: 'cus_9' });
    expect(subscriptionChange('customer.subscription.updated', { object: 'invoice' })).toBeNull();
    expect(subscriptionChange('customer.subscription.updated', null)).toBeNull();
  });
});
