import { beforeEach, describe, expect, it } from '@jest/globals';
import { fakeAudit, type FakeAuditRepository } from '../../test/fakes/audit.js';
import { FakeNotificationPreferencesRepository } from '../../test/fakes/notification-preferences.js';
import { sessionAuth } from '../../test/fakes/organizations.js';
import { FakeUnitOfWork } from '../../test/fakes/unit-of-work.js';
import { trustOrganizationId } from '../common/access/tenant-id.js';
import type { NotificationPreferencesRepository } from './notification-preferences.repository.js';
import { DEFAULT_PREFERENCES, NotificationPreferencesService } from './notification-preferences.service.js';

describe('NotificationPreferencesService', () => {
  let rows: FakeNotificationPreferencesRepository;
  let log: FakeAuditRepository;
  let preferences: NotificationPreferencesService;
  const orgA = trustOrganizationId('aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa');
  const orgB = trustOrganizationId('bbbbbbbb-bbbb-4bbb-8bbb-bbbbbbbbbbbb');

  beforeEach(() => {
    rows = new FakeNotificationPreferencesRepository();
    const audited = fakeAudit();
    log = audited.log;
    preferences = new NotificationPreferencesService(
      new FakeUnitOfWork().asUnitOfWork(),
      rows as unknown as NotificationPreferencesRepository,
      audited.audit,
    );
  });

  it('answers every default until something is saved, without writing', async () => {
    expect(await preferences.get(orgA)).toEqual(DEFAULT_PREFERENCES);
    expect(await preferences.update(sessionAuth(orgA, 'admin-1', 'admin'), {})).toEqual(DEFAULT_PREFERENCES);
    expect(rows.rows.size).toBe(0);
  });

  it('saves only the fields given, audits what changed from and to, and keeps other organizations on defaults', async () => {
    const saved = await preferences.update(sessionAuth(orgA, 'admin-1', 'admin'), {
      usageAlert: false,
      featureVoteThresholdCount: 25,
      teamInvite: true,
    });
    expect(saved).toEqual({ ...DEFAULT_PREFERENCES, usageAlert: false, featureVoteThresholdCount: 25 });
    expect(await preferences.get(orgA)).toEqual(saved);
    expect(await preferences.get(orgB)).toEqual(DEFAULT_PREFERENCES);
    expect(log.rows).toEqual([
      expect.objectContaining({
        organizationId: orgA,
        action: 'notification_preferences.updated',
        metadata: {
          changes: { featureVoteThresholdCount: { from: 10, to: 25 }, usageAlert: { from: true, to: false } },
        },
      }),
    ]);
  });

  it('writes no audit entry when nothing changes', async () => {
    await preferences.update(sessionAuth(orgA, 'admin-1', 'admin'), { flagToggle: true });
    expect(log.rows).toEqual([]);
  });
});
