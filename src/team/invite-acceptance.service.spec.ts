import { beforeEach, describe, expect, it } from '@jest/globals';
import { fakeAudit, type FakeAuditRepository } from '../../test/fakes/audit.js';
import { fakeOrganizations, type FakeOrganizationsRepository } from '../../test/fakes/organizations.js';
import { FakeInvitesRepository } from '../../test/fakes/team.js';
import { FakeUnitOfWork } from '../../test/fakes/unit-of-work.js';
import type { SessionCaller } from '../common/access/auth-context.js';
import { sha256Hex } from '../common/crypto.js';
import type { OrganizationRecord } from '../organizations/organizations.repository.js';
import type { Invite } from './invite.entity.js';
import { InviteAcceptanceService } from './invite-acceptance.service.js';
import type { InvitesRepository } from './invites.repository.js';
import type { TeamNotificationsService } from './team-notifications.service.js';

describe('InviteAcceptanceService', () => {
  let uow: FakeUnitOfWork;
  let repository: FakeOrganizationsRepository;
  let invites: FakeInvitesRepository;
  let log: FakeAuditRepository;
  let notified: Pick<Invite, 'email'>[];
  let service: InviteAcceptanceService;
  let org: OrganizationRecord;
  const invitee: SessionCaller = {
    kind: 'session',
    userId: 'user-1',
    email: 'new@example.com',
    isSuperAdmin: false,
    role: null,
  };

  beforeEach(() => {
    uow = new FakeUnitOfWork();
    const fakes = fakeOrganizations();
    repository = fakes.repository;
    invites = new FakeInvitesRepository();
    const audited = fakeAudit();
    log = audited.log;
    notified = [];
    const notifications = { inviteAccepted: (invite: Invite) => void notified.push(invite) };
    service = new InviteAcceptanceService(
      uow.asUnitOfWork(),
      invites as unknown as InvitesRepository,
      fakes.organizations,
      audited.audit,
      notifications as unknown as TeamNotificationsService,
    );
    org = repository.seed({ name: 'Acme', owner: 'owner-1' });
  });

  const invite = (input: Partial<Invite> = {}) =>
    invites.seed(org.id, { email: 'New@Example.com', role: 'admin', tokenHash: sha256Hex('the-token'), ...input });

  it('makes the invitee a member with the invite’s role, audited, and tells the inviter after the commit', async () => {
    const sent = invite({ invitedBy: 'owner-1' });
    const joined = await service.accept(invitee, 'the-token');
    expect(joined.id).toBe(org.id);
    expect(await repository.roleOf(org.id, 'user-1')).toBe('admin');
    expect(sent).toMatchObject({ status: 'accepted', acceptedBy: 'user-1' });
    expect(log.rows).toEqual([
      expect.objectContaining({
        organizationId: org.id,
        action: 'invite.accepted',
        actorUserId: 'user-1',
        resourceId: sent.id,
      }),
    ]);
    expect(notified).toEqual([sent]);
    expect(uow.committed).toBe(1);
  });

  it('answers the same organization again to the user who accepted, without a second notice', async () => {
    invite();
    await service.accept(invitee, 'the-token');
    const again = await service.accept(invitee, 'the-token');
    expect(again.id).toBe(org.id);
    expect(notified).toHaveLength(1);
    expect(log.actions()).toEqual(['invite.accepted']);
  });

  it('refuses an invite sent to another address (403) and leaves it pending', async () => {
    const sent = invite({ email: 'someone-else@example.com' });
    await expect(service.accept(invitee, 'the-token')).rejects.toMatchObject({ status: 403 });
    expect(sent.status).toBe('pending');
    expect(await repository.roleOf(org.id, 'user-1')).toBeNull();
    expect(notified).toEqual([]);
  });

  it('answers 410 for an invite past its expiry and marks it expired (the mark commits)', async () => {
    const sent = invite({ expiresAt: new Date(Date.now() - 1000) });
    await expect(service.accept(invitee, 'the-token')).rejects.toMatchObject({ status: 410 });
    expect(sent.status).toBe('expired');
    expect(uow.committed).toBe(1);
  });

  it('answers 404 for an unknown token, a revoked invite, or one another user accepted', async () => {
    await expect(service.accept(invitee, 'no-such-token')).rejects.toMatchObject({ status: 404 });
    const revoked = invite({ status: 'revoked' });
    await expect(service.accept(invitee, 'the-token')).rejects.toMatchObject({ status: 404 });
    revoked.status = 'accepted';
    revoked.acceptedBy = 'user-2';
    await expect(service.accept(invitee, 'the-token')).rejects.toMatchObject({ status: 404 });
    expect(await repository.roleOf(org.id, 'user-1')).toBeNull();
  });
});
