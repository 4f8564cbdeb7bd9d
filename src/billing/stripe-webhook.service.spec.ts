import { createHmac } from 'node:crypto';
import { beforeEach, describe, expect, it } from '@jest/globals';
import { fakeAudit, type FakeAuditRepository } from '../../test/fakes/audit.js';
import { FakeBillingEventsRepository } from '../../test/fakes/billing.js';
import { testConfig } from '../../test/fakes/config.js';
import { fakeOrganizations, type FakeOrganizationsRepository } from '../../test/fakes/organizations.js';
import { FakeUnitOfWork } from '../../test/fakes/unit-of-work.js';
import type { OrganizationRecord } from '../organizations/organizations.repository.js';
import type { BillingEventsRepository } from './billing-events.repository.js';
import { StripeWebhookService } from './stripe-webhook.service.js';

const SECRET = 'whsec_unit';

describe('StripeWebhookService', () => {
  let repository: FakeOrganizationsRepository;
  let events: FakeBillingEventsRepository;
  let log: FakeAuditRepository;
  let service: StripeWebhookService;
  let org: OrganizationRecord;
  let created: number;

  beforeEach(() => {
    const fakes = fakeOrganizations();
    repository = fakes.repository;
    events = new FakeBillingEventsRepository();
    const audited = fakeAudit();
    log = audited.log;
    service = new StripeWebhookService(
      new FakeUnitOfWork().asUnitOfWork(),
      events as unknown as BillingEventsRepository,
      { ...testConfig, stripeWebhookSecret: SECRET },
      audited.audit,
      fakes.organizations,
    );
    org = repository.seed({ owner: 'owner-1' });
    created = Math.floor(Date.now() / 1000) - 60;
  });

  function deliver(id: string, type: string, subscription: Record<string, unknown>, at = created) {
    const body = Buffer.from(JSON.stringify({ id, type, created: at, data: { object: subscription } }));
    const timestamp = Math.floor(Date.now() / 1000);
    const signature = createHmac('sha256', SECRET)
      .update(`${timestamp}.${body.toString('utf8')}`)
      .digest('hex');
    return service.receive(body, `t=${timestamp},v1=${signature}`);
  }

  const subscription = (id: string, status: string, tier = 'professional') => ({
    id,
    status,
    customer: 'cus_1',
    metadata: { organization_id: org.id, tier },
  });

  it('applies a subscription to the organization named in its metadata, once, audited by the provider', async () => {
    expect(await deliver('evt_1', 'customer.subscription.created', subscription('sub_1', 'active'))).toBe('applied');
    expect(repository.organizations.get(org.id)).toMatchObject({
      serviceTier: 'professional',
      providerCustomerId: 'cus_1',
      providerSubscriptionId: 'sub_1',
    });
    expect(log.rows).toEqual([
      expect.objectContaining({
        organizationId: org.id,
        actorUserId: null,
        action: 'billing.subscription_updated',
        metadata: expect.objectContaining({ eventId: 'evt_1', tier: { from: 'free', to: 'professional' } }),
      }),
    ]);
    expect(await deliver('evt_1', 'customer.subscription.created', subscription('sub_1', 'active'))).toBe('duplicate');
    expect(log.rows).toHaveLength(1);
  });

  it('records but does not apply an event older than one already applied (Stripe does not deliver in order)', async () => {
    await deliver('evt_new', 'customer.subscription.updated', subscription('sub_1', 'active', 'enterprise'));
    expect(
      await deliver(
        'evt_old',
        'customer.subscription.updated',
        subscription('sub_1', 'active', 'basic'),
        created - 600,
      ),
    ).toBe('stale');
    expect(repository.organizations.get(org.id)?.serviceTier).toBe('enterprise');
    expect(events.events.map((e) => e.outcome)).toEqual(['applied', 'stale']);
  });

  it('does not let the end of a replaced subscription downgrade the organization', async () => {
    await deliver('evt_1', 'customer.subscription.created', subscription('sub_2', 'active'));
    expect(
      await deliver('evt_2', 'customer.subscription.deleted', subscription('sub_1', 'canceled'), created + 1),
    ).toBe('stale');
    expect(repository.organizations.get(org.id)?.serviceTier).toBe('professional');
    expect(
      await deliver('evt_3', 'customer.subscription.deleted', subscription('sub_2', 'canceled'), created + 2),
    ).toBe('applied');
    expect(repository.organizations.get(org.id)).toMatchObject({ serviceTier: 'free', providerSubscriptionId: null });
  });

  it('records an event for no known organization as unmatched, changing nothing', async () => {
    const stranger = { id: 'sub_9', status: 'active', customer: 'cus_unknown', metadata: { tier: 'enterprise' } };
    expect(await deliver('evt_9', 'customer.subscription.created', stranger)).toBe('unmatched');
    expect(repository.organizations.get(org.id)?.serviceTier).toBe('free');
    expect(log.rows).toEqual([]);
  });

  it('ignores other event types and refuses a bad signature (400)', async () => {
    expect(await deliver('evt_x', 'invoice.paid', {})).toBe('ignored');
    await expect(service.receive(Buffer.from('{}'), 't=1,v1=00')).rejects.toMatchObject({ status: 400 });
    expect(events.events).toEqual([]);
  });
});
