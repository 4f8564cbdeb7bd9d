import { describe, expect, it } from '@jest/globals';
import type { Tenant } from '../apps/tenant-resolver.js';
import type { NotificationPreferencesService } from '../organizations/notification-preferences.service.js';
import { PushOutbox } from '../push/push-outbox.js';
import { RecordedAudit } from '../../test/fakes/audit-entries.js';
import { FakeFeedbackRepository } from '../../test/fakes/feedback.js';
import { memberAuth } from '../../test/fakes/org-auth.js';
import { FakePushDeliveriesRepository } from '../../test/fakes/push.js';
import { RecordedNotices } from '../../test/fakes/staff-notices.js';
import { FakeUnitOfWork } from '../../test/fakes/unit-of-work.js';
import { FeedbackService } from './feedback.service.js';

const ORG = '00000000-0000-4000-8000-00000000000a';
const OTHER_ORG = '00000000-0000-4000-8000-00000000000b';
const APP = '00000000-0000-4000-8000-0000000000a1';
const OTHER_APP = '00000000-0000-4000-8000-0000000000b1';

const tenant = (organizationId: string, appId: string) => ({ organizationId, appId, appName: 'Shop' }) as Tenant;

function setup(threshold = 2) {
  const uow = new FakeUnitOfWork();
  const features = new FakeFeedbackRepository();
  const audit = new RecordedAudit();
  const notices = new RecordedNotices();
  const deliveries = new FakePushDeliveriesRepository();
  const preferences = {
    get: () => Promise.resolve({ featureVoteThreshold: true, featureVoteThresholdCount: threshold }),
  } as unknown as NotificationPreferencesService;
  const service = new FeedbackService(
    uow.asUnitOfWork(),
    features as never,
    audit.asAuditService(),
    preferences,
    notices.asStaffNotices(),
    new PushOutbox(deliveries as never),
  );
  return {
    uow,
    features,
    audit,
    notices,
    deliveries,
    service,
    sdk: tenant(ORG, APP),
    auth: memberAuth(ORG, 'staff-1'),
  };
}

describe('FeedbackService', () => {
  it('keeps a submitted request pending and unlisted, except to its submitter, and tells the admins', async () => {
    const { service, sdk, notices } = setup();
    const feature = await service.submit(sdk, { title: 'Dark mode', submitterId: 'user-a' });
    expect(feature.status).toBe('pending');
    expect((await service.sdkList(sdk, { page: 1, per: 20 })).total).toBe(0);
    expect((await service.sdkList(sdk, { page: 1, per: 20, submitter_id: 'user-a' })).total).toBe(1);
    expect(notices.sent).toEqual([expect.objectContaining({ to: 'admins', preference: 'newFeatureRequest' })]);
  });

  it('counts one vote per voter and per device (409 after), and mails the threshold once', async () => {
    const { service, sdk, notices, features } = setup(2);
    const feature = await service.submit(sdk, { title: 'Dark mode', submitterId: 'user-a' });
    await service.vote(sdk, feature.id, { voterId: 'v1', deviceHash: 'd1' });
    await expect(service.vote(sdk, feature.id, { voterId: 'v1' })).rejects.toMatchObject({
      status: 409,
      code: 'duplicate_vote',
    });
    await expect(service.vote(sdk, feature.id, { voterId: 'v2', deviceHash: 'd1' })).rejects.toMatchObject({
      status: 409,
    });
    await service.vote(sdk, feature.id, { voterId: 'v2' });
    await service.vote(sdk, feature.id, { voterId: 'v3' });
    expect(features.features.get(feature.id)!.voteCount).toBe(3);
    expect(notices.sent.filter((mail) => mail.preference === null)).toHaveLength(1);
    await service.unvote(sdk, feature.id, 'v3');
    await service.unvote(sdk, feature.id, 'v3');
    expect(features.features.get(feature.id)!.voteCount).toBe(2);
  });

  it('answers a request of another app or organization as not found to the SDK and the console', async () => {
    const { service, sdk, auth } = setup();
    const feature = await service.submit(sdk, { title: 'Dark mode', submitterId: 'user-a' });
    await expect(service.sdkGet(tenant(ORG, OTHER_APP), feature.id)).rejects.toMatchObject({ status: 404 });
    await expect(service.vote(tenant(OTHER_ORG, OTHER_APP), feature.id, { voterId: 'v' })).rejects.toMatchObject({
      status: 404,
    });
    const stranger = memberAuth(OTHER_ORG, 'stranger');
    await expect(service.get(stranger, feature.id)).rejects.toMatchObject({ status: 404 });
    await expect(service.setStatus(stranger, feature.id, 'planned')).rejects.toMatchObject({ status: 404 });
    await expect(service.comment(stranger, feature.id, 'hi')).rejects.toMatchObject({ status: 404 });
    expect((await service.get(auth, feature.id)).feature.status).toBe('pending');
  });

  it('records and mails a status change once it commits; the same status changes nothing', async () => {
    const { service, sdk, auth, audit, notices, uow } = setup();
    const feature = await service.submit(sdk, { title: 'Dark mode', submitterId: 'user-a' });
    notices.sent.length = 0;
    await uow.run(async () => {
      await service.setStatus(auth, feature.id, 'planned');
      expect(notices.sent).toEqual([]);
    });
    expect(notices.sent).toEqual([expect.objectContaining({ preference: 'featureStatusChange' })]);
    await service.setStatus(auth, feature.id, 'planned');
    expect(audit.entries).toEqual([
      expect.objectContaining({
        action: 'feature_request.status_changed',
        metadata: { from: 'pending', to: 'planned' },
      }),
    ]);
    expect(notices.sent).toHaveLength(1);
  });

  it('tells the submitter and every voter of a staff comment, in the inbox and by push', async () => {
    const { service, sdk, auth, deliveries, audit } = setup();
    const feature = await service.submit(sdk, { title: 'Dark mode', submitterId: 'user-a' });
    await service.vote(sdk, feature.id, { voterId: 'v1' });
    await service.vote(sdk, feature.id, { voterId: 'user-a', deviceHash: 'other' });
    const comment = await service.comment(auth, feature.id, 'Shipping next week');
    expect(comment).toMatchObject({ authorId: 'staff-1', authorType: 'admin' });
    expect(deliveries.enqueued).toEqual([
      expect.objectContaining({ organizationId: ORG, appId: APP, subscriberIds: ['user-a', 'v1'] }),
    ]);
    expect(deliveries.enqueued[0].payload).toMatchObject({ type: 'feature_comment', commentId: comment.id });
    const inbox = await service.notifications(sdk, { page: 1, per: 20, subscriber_id: 'v1' });
    expect(inbox.items.map((item) => item.body)).toEqual(['Shipping next week']);
    expect(audit.actions()).toEqual(['feature_request.commented']);
  });
});
