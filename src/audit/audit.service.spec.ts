import { beforeEach, describe, expect, it } from '@jest/globals';
import { FakeAuditRepository, fakeAudit } from '../../test/fakes/audit.js';
import { apiKeyAuth, sessionAuth } from '../../test/fakes/organizations.js';
import type { AuthContext } from '../common/access/auth-context.js';
import { trustOrganizationId } from '../common/access/tenant-id.js';
import type { PageQuery } from '../common/pagination.js';
import type { AuditService } from './audit.service.js';

const A = trustOrganizationId('org-a');
const B = trustOrganizationId('org-b');

const query = (page: number, per: number): PageQuery => ({ page, per });

describe('AuditService (the organization audit log, on fakes)', () => {
  let log: FakeAuditRepository;
  let audit: AuditService;

  beforeEach(() => {
    ({ audit, log } = fakeAudit());
  });

  it('records a signed-in user as the actor, with the organization, action, resource, metadata and client address', async () => {
    await audit.record(sessionAuth(A, 'u-ann', 'admin', 'ann@example.com'), {
      organizationId: A,
      action: 'app.updated',
      resourceType: 'app',
      resourceId: 'app-1',
      metadata: { fields: ['appName'] },
    });
    expect(log.rows).toEqual([
      {
        organizationId: A,
        actorUserId: 'u-ann',
        actorEmail: 'ann@example.com',
        action: 'app.updated',
        resourceType: 'app',
        resourceId: 'app-1',
        metadata: { fields: ['appName'] },
        ipAddress: '203.0.113.7',
      },
    ]);
  });

  it('records an API key as acting for the user who created it', async () => {
    const key: AuthContext = {
      caller: {
        kind: 'apiKey',
        keyId: 'key-1',
        prefix: 'gpat_abc',
        scopes: ['admin:team'],
        email: 'creator@example.com',
        userId: 'u-creator',
        role: 'admin',
        serviceTier: 'professional',
      },
      organizationId: A,
      ipAddress: '198.51.100.4',
    };
    await audit.record(key, { organizationId: A, action: 'invite.created', resourceType: 'invite' });
    expect(log.rows[0]).toMatchObject({
      actorUserId: 'u-creator',
      actorEmail: 'creator@example.com',
      ipAddress: '198.51.100.4',
    });
  });

  it('records an API key no user created with no actor', async () => {
    await audit.record(apiKeyAuth(A, 'professional'), {
      organizationId: A,
      action: 'invite.created',
      resourceType: 'invite',
    });
    expect(log.rows[0]).toMatchObject({ actorUserId: null, actorEmail: null, ipAddress: null });
  });

  it('records a change made by the service itself (no caller) with no actor and no address', async () => {
    await audit.record(null, {
      organizationId: A,
      action: 'flag.schedule_applied',
      resourceType: 'feature_flag',
      resourceId: 'flag-1',
      metadata: { version: 3 },
    });
    expect(log.rows).toEqual([
      {
        organizationId: A,
        actorUserId: null,
        actorEmail: null,
        action: 'flag.schedule_applied',
        resourceType: 'feature_flag',
        resourceId: 'flag-1',
        metadata: { version: 3 },
        ipAddress: null,
      },
    ]);
  });

  it('records an entry without a resource id or metadata as null and an empty object, never as missing', async () => {
    await audit.record(sessionAuth(A, 'u-ann', 'owner'), {
      organizationId: A,
      action: 'org.settings_updated',
      resourceType: 'organization',
    });
    expect(log.rows[0].resourceId).toBeNull();
    expect(log.rows[0].metadata).toEqual({});
  });

  it("files the entry under the entry's organization, not the one the caller has selected", async () => {
    // A user accepting an invitation acts from another organization (or none) into the inviting one.
    await audit.record(sessionAuth(B, 'u-ann', 'member'), {
      organizationId: A,
      action: 'invite.accepted',
      resourceType: 'invite',
    });
    expect(log.rows.map((row) => row.organizationId)).toEqual([A]);
    expect((await audit.page(B, query(1, 50))).total).toBe(0);
    expect((await audit.page(A, query(1, 50))).total).toBe(1);
  });

  it('fails the change it records when the entry cannot be written, so no audited change goes unlogged', async () => {
    const failing = new FakeAuditRepository();
    failing.insert = () => Promise.reject(new Error('connection lost'));
    const { audit: refusing } = fakeAudit(failing);
    await expect(
      refusing.record(sessionAuth(A, 'u-ann', 'admin'), {
        organizationId: A,
        action: 'app.deleted',
        resourceType: 'app',
      }),
    ).rejects.toThrow('connection lost');
  });

  it("reads one page of the organization's log, newest first, with the total, and nothing of another organization", async () => {
    let second = Date.parse('2026-01-01T00:00:00Z');
    log.clock = () => new Date((second += 1_000));
    const admin = sessionAuth(A, 'u-ann', 'admin');
    for (let n = 1; n <= 5; n++) {
      await audit.record(admin, { organizationId: A, action: `test.entry_${n}`, resourceType: 'test' });
    }
    await audit.record(sessionAuth(B, 'u-bob', 'admin'), {
      organizationId: B,
      action: 'other.entry',
      resourceType: 'test',
    });

    const first = await audit.page(A, query(1, 2));
    expect(first.items.map((entry) => entry.action)).toEqual(['test.entry_5', 'test.entry_4']);
    expect(first.total).toBe(5);
    const last = await audit.page(A, query(3, 2));
    expect(last.items.map((entry) => entry.action)).toEqual(['test.entry_1']);
    expect((await audit.page(A, query(4, 2))).items).toEqual([]);
    expect((await audit.page(B, query(1, 50))).items.map((entry) => entry.action)).toEqual(['other.entry']);
  });
});
