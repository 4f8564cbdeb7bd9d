import { beforeEach, describe, expect, it } from '@jest/globals';
import { fakeAudit, type FakeAuditRepository } from '../../test/fakes/audit.js';
import { testConfig } from '../../test/fakes/config.js';
import { FakeMail } from '../../test/fakes/mail.js';
import {
  apiKeyAuth,
  fakeOrganizations,
  sessionAuth,
  type FakeOrganizationsRepository,
  type FakeUsers,
} from '../../test/fakes/organizations.js';
import { FakeUnitOfWork } from '../../test/fakes/unit-of-work.js';
import { FakeInvitesRepository } from '../../test/fakes/team.js';
import type { OrganizationRecord } from '../organizations/organizations.repository.js';
import type { InvitesRepository } from './invites.repository.js';
import { InvitesService } from './invites.service.js';

describe('InvitesService', () => {
  let uow: FakeUnitOfWork;
  let repository: FakeOrganizationsRepository;
  let users: FakeUsers;
  let invites: FakeInvitesRepository;
  let log: FakeAuditRepository;
  let mail: FakeMail;
  let service: InvitesService;
  let org: OrganizationRecord;
  let owner: string;
  let admin: string;

  beforeEach(() => {
    uow = new FakeUnitOfWork();
    const fakes = fakeOrganizations();
    ({ repository, users } = fakes);
    invites = new FakeInvitesRepository();
    const audited = fakeAudit();
    log = audited.log;
    mail = new FakeMail();
    service = new InvitesService(
      uow.asUnitOfWork(),
      invites as unknown as InvitesRepository,
      fakes.organizations,
      users.asUsersService(),
      testConfig,
      audited.audit,
      mail.asMailService(),
    );
    owner = users.add('owner@example.com');
    admin = users.add('admin@example.com');
    // Basic: 3 seats.
    org = repository.seed({ name: 'Acme', tier: 'basic', owner });
    repository.join(org.id, admin, 'admin');
  });

  it('creates a pending invite, audited, and mails the link only once the unit of work has committed', async () => {
    let mailedInside = -1;
    const work = uow.run(async () => {
      const invite = await service.create(sessionAuth(org.id, admin, 'admin', 'admin@example.com'), {
        email: ' new@example.com ',
      });
      mailedInside = mail.sent.length;
      return invite;
    });
    const invite = await work;
    expect(mailedInside).toBe(0);
    expect(invite).toMatchObject({ email: 'new@example.com', role: 'member', status: 'pending', invitedBy: admin });
    expect(mail.sent).toEqual([
      expect.objectContaining({ to: 'new@example.com', subject: 'You are invited to Acme on Attestly' }),
    ]);
    expect(log.rows).toEqual([
      expect.objectContaining({
        action: 'invite.created',
        resourceId: invite.id,
        metadata: { email: 'new@example.com', role: 'member' },
      }),
    ]);
  });

  it('counts members plus pending invites against the plan’s seats (403)', async () => {
    await service.create(sessionAuth(org.id, admin, 'admin'), { email: 'third@example.com' });
    await expect(
      service.create(sessionAuth(org.id, admin, 'admin'), { email: 'fourth@example.com' }),
    ).rejects.toMatchObject({
      status: 403,
      message: 'All 3 seats of this plan are taken',
    });
    expect(invites.invites).toHaveLength(1);
    expect(mail.sent).toHaveLength(1);
  });

  it('frees the seat of an overdue invite at once, before the expiry job runs', async () => {
    const overdue = invites.seed(org.id, { email: 'late@example.com', expiresAt: new Date(Date.now() - 1000) });
    await service.create(sessionAuth(org.id, admin, 'admin'), { email: 'late@example.com' });
    expect(overdue.status).toBe('expired');
  });

  it('refuses an address that is a member or already invited, whatever its case (409)', async () => {
    await expect(
      service.create(sessionAuth(org.id, admin, 'admin'), { email: 'ADMIN@example.com' }),
    ).rejects.toMatchObject({
      status: 409,
      message: 'That address already belongs to a member of this organization',
    });
    invites.seed(org.id, { email: 'pending@example.com' });
    await expect(
      service.create(sessionAuth(org.id, admin, 'admin'), { email: 'Pending@Example.com' }),
    ).rejects.toMatchObject({
      status: 409,
      message: 'That address already has a pending invite',
    });
  });

  it('lets only an Owner invite an Owner', async () => {
    await expect(
      service.create(sessionAuth(org.id, admin, 'admin'), { email: 'boss@example.com', role: 'owner' }),
    ).rejects.toMatchObject({
      status: 403,
    });
    const invite = await service.create(sessionAuth(org.id, owner, 'owner'), {
      email: 'boss@example.com',
      role: 'owner',
    });
    expect(invite.role).toBe('owner');
  });

  it('refuses an admin:team key below Enterprise', async () => {
    await expect(service.create(apiKeyAuth(org.id, 'basic'), { email: 'bot@example.com' })).rejects.toMatchObject({
      status: 403,
      message: 'The admin:team scope works on the Enterprise plan only',
    });
  });

  it('revokes a pending invite once (audited); revoking again, or an expired one, changes nothing', async () => {
    const invite = invites.seed(org.id, { email: 'x@example.com' });
    await service.revoke(sessionAuth(org.id, admin, 'admin'), invite.id);
    await service.revoke(sessionAuth(org.id, admin, 'admin'), invite.id);
    expect(invite.status).toBe('revoked');
    expect(log.actions()).toEqual(['invite.revoked']);

    const overdue = invites.seed(org.id, { email: 'y@example.com', expiresAt: new Date(Date.now() - 1000) });
    await service.revoke(sessionAuth(org.id, admin, 'admin'), overdue.id);
    expect(overdue.status).toBe('expired');
    expect(log.actions()).toEqual(['invite.revoked']);
  });

  it('answers 409 for an accepted invite and 404 for another organization’s', async () => {
    const accepted = invites.seed(org.id, { email: 'in@example.com', status: 'accepted' });
    await expect(service.revoke(sessionAuth(org.id, admin, 'admin'), accepted.id)).rejects.toMatchObject({
      status: 409,
    });
    const other = repository.seed({ owner: users.add('o2@example.com') });
    const theirs = invites.seed(other.id, { email: 'z@example.com' });
    await expect(service.revoke(sessionAuth(org.id, admin, 'admin'), theirs.id)).rejects.toMatchObject({ status: 404 });
    expect(theirs.status).toBe('pending');
  });
});
