import { describe, expect, it } from '@jest/globals';
import {
  subscriptionEventsFor,
  toSubscriptionClaim,
  toSubscriptionWebhookData,
  type EntitlementState,
} from './entitlement-state.js';

const active: EntitlementState = {
  subjectId: 'user-1',
  tier: 'premium',
  status: 'active',
  interval: 'month',
  source: 'app_store',
  productId: 'premium.monthly',
  expiresAt: new Date('2030-01-01T00:00:00.000Z'),
  sourceSubscriptionId: 'txn-1',
  environment: 'production',
  autoRenew: true,
};

describe('subscriptionEventsFor', () => {
  it('announces the first state of a subject as a change', () => {
    expect(subscriptionEventsFor(null, active)).toEqual(['subscription.changed']);
  });

  it('stays quiet when nothing material changes', () => {
    expect(subscriptionEventsFor(active, { ...active })).toEqual([]);
    expect(subscriptionEventsFor(active, { ...active, expiresAt: new Date(active.expiresAt!.getTime()) })).toEqual([]);
    expect(subscriptionEventsFor(active, { ...active, sourceSubscriptionId: 'txn-2', source: 'stripe' })).toEqual([]);
  });

  it.each<[string, Partial<EntitlementState>]>([
    ['tier', { tier: 'pro' }],
    ['status', { status: 'grace_period' }],
    ['interval', { interval: 'year' }],
    ['expiry', { expiresAt: new Date('2031-01-01T00:00:00.000Z') }],
    ['expiry removed', { expiresAt: null }],
    ['auto-renew', { autoRenew: false }],
    ['product', { productId: 'premium.yearly' }],
  ])('announces a change of %s', (_name, change) => {
    expect(subscriptionEventsFor(active, { ...active, ...change })).toEqual(['subscription.changed']);
  });

  it('adds subscription.expired when the status becomes expired or revoked, once', () => {
    expect(subscriptionEventsFor(active, { ...active, status: 'expired' })).toEqual([
      'subscription.changed',
      'subscription.expired',
    ]);
    expect(subscriptionEventsFor(active, { ...active, status: 'revoked' })).toEqual([
      'subscription.changed',
      'subscription.expired',
    ]);
    const expired = { ...active, status: 'expired' as const };
    expect(subscriptionEventsFor(expired, { ...expired, tier: 'basic' })).toEqual(['subscription.changed']);
    expect(subscriptionEventsFor(null, expired)).toEqual(['subscription.changed', 'subscription.expired']);
  });

  it('adds subscription.refunded when the status becomes refunded', () => {
    expect(subscriptionEventsFor(active, { ...active, status: 'refunded' })).toEqual([
      'subscription.changed',
      'subscription.refunded',
    ]);
  });
});

describe('payloads', () => {
  it('gives webhooks ISO expiry (or empty) and auto_renew as a string', () => {
    expect(toSubscriptionWebhookData(active, 'evt-1')).toEqual({
      subject_id: 'user-1',
      tier: 'premium',
      status: 'active',
      interval: 'month',
      source: 'app_store',
      product_id: 'premium.monthly',
      expires_at: '2030-01-01T00:00:00.000Z',
      source_subscription_id: 'txn-1',
      environment: 'production',
      auto_renew: 'true',
      event_id: 'evt-1',
    });
    expect(toSubscriptionWebhookData({ ...active, expiresAt: null, autoRenew: false }, 'evt-2')).toMatchObject({
      expires_at: '',
      auto_renew: 'false',
    });
  });

  it('gives the token claim epoch-second expiry and a boolean auto_renew', () => {
    expect(toSubscriptionClaim(active)).toMatchObject({ status: 'active', expires_at: 1893456000, auto_renew: true });
    expect(toSubscriptionClaim({ ...active, expiresAt: null })).toMatchObject({ expires_at: null });
    expect(toSubscriptionClaim(null)).toEqual({ status: 'none' });
  });
});
