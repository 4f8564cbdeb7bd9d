import { beforeEach, describe, expect, it } from '@jest/globals';
import { FakeEntitlementsRepository } from '../../test/fakes/entitlements.js';
import { sessionAuth } from '../../test/fakes/organizations.js';
import { FakeUnitOfWork } from '../../test/fakes/unit-of-work.js';
import { trustOrganizationId } from '../common/access/tenant-id.js';
import type { WebhookEvents } from '../webhooks/webhook-events.js';
import type { EntitlementEventDto } from './entitlements.dto.js';
import type { EntitlementsRepository } from './entitlements.repository.js';
import { EntitlementsService } from './entitlements.service.js';

describe('EntitlementsService', () => {
  let uow: FakeUnitOfWork;
  let store: FakeEntitlementsRepository;
  let announced: { organizationId: string; events: readonly string[]; active: boolean }[];
  let service: EntitlementsService;
  const auth = sessionAuth(trustOrganizationId('11111111-1111-4111-8111-111111111111'), 'admin-1', 'admin');

  beforeEach(() => {
    uow = new FakeUnitOfWork();
    store = new FakeEntitlementsRepository();
    announced = [];
    const webhooks = {
      announceSubscriptionChange: (organizationId: string, events: readonly string[]) =>
        Promise.resolve(void announced.push({ organizationId, events, active: uow.active })),
    };
    service = new EntitlementsService(
      uow.asUnitOfWork(),
      store as unknown as EntitlementsRepository,
      webhooks as unknown as WebhookEvents,
    );
  });

  const event = (id: string, status: string, tier = 'gold'): EntitlementEventDto => ({
    event_id: id,
    subject_id: 'user-42',
    status,
    tier,
  });

  it('replaces the subject’s entitlement and announces the change in the same unit of work', async () => {
    const result = await service.ingest(auth, event('e1', 'active'));
    expect(result).toMatchObject({
      eventId: 'e1',
      duplicate: false,
      entitlement: { subjectId: 'user-42', status: 'active', tier: 'gold' },
    });
    expect(store.lockedSubjects).toEqual([`${auth.organizationId}/user-42`]);
    expect(announced).toEqual([
      { organizationId: auth.organizationId, events: ['subscription.changed'], active: true },
    ]);
  });

  it('announces expiry when the status ends, and nothing for a state that does not change', async () => {
    await service.ingest(auth, event('e1', 'active'));
    await service.ingest(auth, event('e2', 'active'));
    await service.ingest(auth, event('e3', 'expired'));
    expect(announced.map((a) => a.events)).toEqual([
      ['subscription.changed'],
      [],
      ['subscription.changed', 'subscription.expired'],
    ]);
  });

  it('answers the same event again as a duplicate without changing anything', async () => {
    await service.ingest(auth, event('e1', 'active'));
    await service.ingest(auth, event('e2', 'expired'));
    const again = await service.ingest(auth, event('e1', 'active'));
    expect(again).toMatchObject({ duplicate: true, entitlement: { status: 'expired' } });
    expect(announced).toHaveLength(2);
  });

  it('refuses the same event id with other content (409)', async () => {
    await service.ingest(auth, event('e1', 'active'));
    await expect(service.ingest(auth, event('e1', 'active', 'silver'))).rejects.toMatchObject({ status: 409 });
    expect((await store.find(auth.organizationId, 'user-42'))?.tier).toBe('gold');
  });
});
