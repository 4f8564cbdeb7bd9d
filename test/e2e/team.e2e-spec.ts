import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { InviteExpiryJob } from '../../src/team/invite-expiry.job.js';
import {
  createApiKey,
  createOrg,
  createUser,
  orgWithMember,
  signIn,
  uniqueEmail,
  type TestOrg,
} from '../factories/identity.js';
import { addMembers, setTier } from '../factories/organization.js';
import { sentMails, startTestApp, type HttpClient, type SentMail, type TestApp } from '../harness/test-app.js';

const MEMBERS = '/api/v1/org/members';
const INVITES = '/api/v1/org/invites';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const DAY_MS = 86_400_000;

describe('team members and invites', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  function invite(agent: HttpClient, email: string, role = 'member') {
    return agent.post(INVITES).send({ email, role });
  }

  async function inviteMail(to: string): Promise<SentMail> {
    await waitFor(() => sentMails(t, to).some((mail) => mail.links.some((link) => link.includes('/accept-invite'))));
    return sentMails(t, to).find((mail) => mail.links.some((link) => link.includes('/accept-invite')))!;
  }

  async function inviteToken(to: string): Promise<string> {
    const mail = await inviteMail(to);
    const link = mail.links.find((l) => l.includes('/accept-invite'))!;
    return new URL(link).searchParams.get('token')!;
  }

  async function inviteStatus(id: string): Promise<string> {
    const [row] = await t.sql<{ status: string }>(`SELECT status FROM invites WHERE id = $1`, [id]);
    return row.status;
  }

  async function auditActions(orgId: string): Promise<string[]> {
    const rows = await t.sql<{ action: string }>(
      `SELECT action FROM audit_logs WHERE organization_id = $1 ORDER BY created_at, id`,
      [orgId],
    );
    return rows.map((row) => row.action);
  }

  describe('listing members', () => {
    it('lists members oldest join first with userId, email, role and joinedAt, to any member', async () => {
      const org = await createOrg(t);
      const owner = await createUser(t, { org, role: 'owner' });
      const viewer = await createUser(t, { org, role: 'viewer' });
      await t.sql(`UPDATE memberships SET created_at = now() - interval '2 days' WHERE user_id = $1`, [owner.id]);
      await t.sql(`UPDATE memberships SET created_at = now() - interval '1 day' WHERE user_id = $1`, [viewer.id]);
      const late = await createUser(t, { org, role: 'admin' });
      const agent = await signIn(t, viewer.email);

      const response = await agent.get(MEMBERS).expect(200);
      expect(response.body).toEqual([
        { userId: owner.id, email: owner.email, role: 'owner', joinedAt: expect.any(String) },
        { userId: viewer.id, email: viewer.email, role: 'viewer', joinedAt: expect.any(String) },
        { userId: late.id, email: late.email, role: 'admin', joinedAt: expect.any(String) },
      ]);
    });

    it('accepts an org:read key, refuses a key without it naming the scope, and needs authentication', async () => {
      const { org, user } = await orgWithMember(t);
      const readKey = await createApiKey(t, org, ['org:read']);
      const listed = await t.http().get(MEMBERS).set('Authorization', `Bearer ${readKey}`).expect(200);
      expect(listed.body.map((m: { userId: string }) => m.userId)).toEqual([user.id]);
      await t.http().get(INVITES).set('Authorization', `Bearer ${readKey}`).expect(200);

      const feedbackKey = await createApiKey(t, org, ['feedback:read']);
      const refused = await t.http().get(MEMBERS).set('Authorization', `Bearer ${feedbackKey}`).expect(403);
      expect(refused.body.code).toBe('forbidden');
      expect(refused.body.error).toContain('org:read');

      await t.http().get(MEMBERS).expect(401);
    });

    it('shows only the caller organization', async () => {
      const { agent } = await orgWithMember(t);
      const other = await createOrg(t);
      const stranger = await createUser(t, { org: other });
      const listed = await agent.get(MEMBERS).expect(200);
      expect(listed.body.map((m: { userId: string }) => m.userId)).not.toContain(stranger.id);
    });
  });

  describe('sending invites', () => {
    it('answers 200 with the pending invite, mails a 7-day link, stores only the token hash and audits', async () => {
      const { org, user: admin, agent } = await orgWithMember(t, { tier: 'professional', role: 'admin' });
      const email = uniqueEmail('invitee');
      const before = Date.now();
      const response = await invite(agent, email, 'Viewer').expect(200);
      expect(response.body).toEqual({
        id: expect.stringMatching(UUID),
        email,
        role: 'viewer',
        status: 'pending',
        invitedBy: admin.id,
        expiresAt: expect.any(String),
        createdAt: expect.any(String),
      });
      const expiresIn = new Date(response.body.expiresAt).getTime() - before;
      expect(expiresIn).toBeGreaterThan(7 * DAY_MS - 60_000);
      expect(expiresIn).toBeLessThan(7 * DAY_MS + 60_000);

      const mail = await inviteMail(email);
      expect(mail.subject).toContain(org.name);
      const link = mail.links.find((l) => l.includes('/accept-invite'))!;
      expect(link.startsWith(`${t.config.baseUrl}/accept-invite?token=`)).toBe(true);
      const token = new URL(link).searchParams.get('token')!;
      const [stored] = await t.sql<{ token_hash: string }>(`SELECT token_hash FROM invites WHERE id = $1`, [
        response.body.id,
      ]);
      expect(stored.token_hash).toBe(createHash('sha256').update(token).digest('hex'));
      expect(stored.token_hash).not.toContain(token);

      const [audit] = await t.sql(
        `SELECT action, actor_email, resource_id, metadata FROM audit_logs WHERE organization_id = $1 AND action = 'invite.created'`,
        [org.id],
      );
      expect(audit).toEqual({
        action: 'invite.created',
        actor_email: admin.email,
        resource_id: response.body.id,
        metadata: { email, role: 'viewer' },
      });
    });

    it('refuses members and viewers (403) and names invalid fields (422)', async () => {
      const org = await createOrg(t, { tier: 'professional' });
      for (const role of ['member', 'viewer'] as const) {
        const user = await createUser(t, { org, role });
        const agent = await signIn(t, user.email);
        expect((await invite(agent, uniqueEmail()).expect(403)).body.code).toBe('forbidden');
      }
      const owner = await createUser(t, { org, role: 'owner' });
      const agent = await signIn(t, owner.email);
      const invalid = await agent.post(INVITES).send({ email: 'nope', role: 'boss' }).expect(422);
      expect(invalid.body.fields.map((f: { field: string }) => f.field).sort()).toEqual(['email', 'role']);
    });

    it('answers 409 for an address that is already a member or already has a pending invite', async () => {
      const { org, agent } = await orgWithMember(t, { tier: 'professional' });
      const member = await createUser(t, { org, role: 'member' });
      expect((await invite(agent, member.email.toUpperCase()).expect(409)).body.code).toBe('conflict');
      const email = uniqueEmail();
      await invite(agent, email).expect(200);
      await invite(agent, email.toUpperCase()).expect(409);
    });

    it('lets only an Owner invite an Owner', async () => {
      const org = await createOrg(t, { tier: 'professional' });
      const admin = await createUser(t, { org, role: 'admin' });
      const owner = await createUser(t, { org, role: 'owner' });
      await invite(await signIn(t, admin.email), uniqueEmail(), 'owner').expect(403);
      await invite(await signIn(t, owner.email), uniqueEmail(), 'owner').expect(200);
    });

    it.each([
      ['free', 1],
      ['basic', 3],
      ['professional', 10],
      ['enterprise', 50],
    ])('on %s allows %i seats, and pending invites hold seats', async (tier, seats) => {
      const { org, agent } = await orgWithMember(t, { tier });
      // The owner holds one seat; fill the rest with pending invites.
      for (let i = 1; i < seats; i++) await invite(agent, uniqueEmail(`seat${i}`)).expect(200);
      const full = await invite(agent, uniqueEmail('one-too-many')).expect(403);
      expect(full.body).toMatchObject({ code: 'forbidden', limit: seats, current: seats });
      expect(full.body.error).toContain(`${seats} seats`);
      const [row] = await t.sql<{ n: number }>(`SELECT count(*)::int AS n FROM invites WHERE organization_id = $1`, [
        org.id,
      ]);
      expect(row.n).toBe(seats - 1);
    });

    it('never gives one seat to two invites sent at once', async () => {
      const { org, agent } = await orgWithMember(t, { tier: 'professional' });
      await addMembers(t, org, 7);
      // 8 of 10 seats are taken: of 6 simultaneous invites exactly 2 get through.
      const results = await Promise.all(Array.from({ length: 6 }, (_, i) => invite(agent, uniqueEmail(`race${i}`))));
      expect(results.map((r) => r.status).sort()).toEqual([200, 200, 403, 403, 403, 403]);
      const [row] = await t.sql<{ n: number }>(
        `SELECT count(*)::int AS n FROM invites WHERE organization_id = $1 AND status = 'pending'`,
        [org.id],
      );
      expect(row.n).toBe(2);
    });

    it('frees the seat when an invite is revoked or has expired', async () => {
      const { agent } = await orgWithMember(t, { tier: 'basic' });
      const first = await invite(agent, uniqueEmail()).expect(200);
      const second = await invite(agent, uniqueEmail()).expect(200);
      await invite(agent, uniqueEmail()).expect(403);
      await agent.delete(`${INVITES}/${first.body.id}`).expect(204);
      await invite(agent, uniqueEmail()).expect(200);
      await t.sql(`UPDATE invites SET expires_at = now() - interval '1 minute' WHERE id = $1`, [second.body.id]);
      await invite(agent, uniqueEmail()).expect(200);
      expect(await inviteStatus(second.body.id)).toBe('expired');
    });

    it('lets a revoked or expired invite be sent again to the same address', async () => {
      const { agent } = await orgWithMember(t, { tier: 'professional' });
      const revokedEmail = uniqueEmail('revoked');
      const revoked = await invite(agent, revokedEmail).expect(200);
      await agent.delete(`${INVITES}/${revoked.body.id}`).expect(204);
      const again = await invite(agent, revokedEmail).expect(200);
      expect(again.body.id).not.toBe(revoked.body.id);

      const expiredEmail = uniqueEmail('expired');
      const expired = await invite(agent, expiredEmail).expect(200);
      await t.sql(`UPDATE invites SET expires_at = now() - interval '1 second' WHERE id = $1`, [expired.body.id]);
      await invite(agent, expiredEmail).expect(200);
      expect(await inviteStatus(expired.body.id)).toBe('expired');
    });
  });

  describe('listing and revoking invites', () => {
    it('lists pending invites newest first, without revoked, expired or accepted ones', async () => {
      const { agent } = await orgWithMember(t, { tier: 'professional' });
      const old = await invite(agent, uniqueEmail('old')).expect(200);
      await t.sql(`UPDATE invites SET created_at = now() - interval '1 hour' WHERE id = $1`, [old.body.id]);
      const fresh = await invite(agent, uniqueEmail('fresh')).expect(200);
      const revoked = await invite(agent, uniqueEmail('revoked')).expect(200);
      await agent.delete(`${INVITES}/${revoked.body.id}`).expect(204);
      const overdue = await invite(agent, uniqueEmail('overdue')).expect(200);
      await t.sql(`UPDATE invites SET expires_at = now() - interval '1 second' WHERE id = $1`, [overdue.body.id]);
      const accepted = await invite(agent, uniqueEmail('accepted')).expect(200);
      await t.sql(`UPDATE invites SET status = 'accepted' WHERE id = $1`, [accepted.body.id]);

      const listed = await agent.get(INVITES).expect(200);
      expect(listed.body.map((i: { id: string }) => i.id)).toEqual([fresh.body.id, old.body.id]);
      expect(listed.body[0]).toEqual(fresh.body);
    });

    it('revokes with 204, twice without effect, and audits once', async () => {
      const { org, agent } = await orgWithMember(t, { tier: 'basic' });
      const sent = await invite(agent, uniqueEmail()).expect(200);
      await agent.delete(`${INVITES}/${sent.body.id}`).expect(204);
      await agent.delete(`${INVITES}/${sent.body.id}`).expect(204);
      expect(await inviteStatus(sent.body.id)).toBe('revoked');
      expect((await auditActions(org.id)).filter((a) => a === 'invite.revoked')).toHaveLength(1);
    });

    it('answers 404 for an unknown invite or one of another organization, 400 for a malformed id', async () => {
      const { agent } = await orgWithMember(t, { tier: 'basic' });
      const { agent: otherAgent } = await orgWithMember(t, { tier: 'basic' });
      const foreign = await invite(otherAgent, uniqueEmail()).expect(200);
      await agent.delete(`${INVITES}/${foreign.body.id}`).expect(404);
      expect(await inviteStatus(foreign.body.id)).toBe('pending');
      await agent.delete(`${INVITES}/00000000-0000-4000-8000-000000000000`).expect(404);
      const malformed = await agent.delete(`${INVITES}/not-a-uuid`).expect(400);
      expect(malformed.body.error).toContain('inviteId');
    });

    it('answers 409 when revoking an invite that was accepted', async () => {
      const { agent } = await orgWithMember(t, { tier: 'basic' });
      const invitee = await createUser(t);
      const sent = await invite(agent, invitee.email).expect(200);
      const inviteeAgent = await signIn(t, invitee.email);
      await inviteeAgent
        .post('/api/v1/auth/accept-invite')
        .send({ token: await inviteToken(invitee.email) })
        .expect(200);
      await agent.delete(`${INVITES}/${sent.body.id}`).expect(409);
    });
  });

  describe('accepting invites (Invite state table)', () => {
    it('pending → accepted: joins with the invited role, then tells the inviter', async () => {
      const { org, user: owner, agent } = await orgWithMember(t, { tier: 'basic' });
      const invitee = await createUser(t);
      const sent = await invite(agent, invitee.email, 'admin').expect(200);
      const inviteeAgent = await signIn(t, invitee.email);
      const accepted = await inviteeAgent
        .post('/api/v1/auth/accept-invite')
        .send({ token: await inviteToken(invitee.email) })
        .expect(200);
      expect(accepted.body).toEqual({ orgId: org.id, orgName: org.name, orgSlug: org.slug });
      expect(await inviteStatus(sent.body.id)).toBe('accepted');
      const members = await agent.get(MEMBERS).expect(200);
      expect(members.body.map((m: { email: string; role: string }) => [m.email, m.role])).toEqual([
        [owner.email, 'owner'],
        [invitee.email, 'admin'],
      ]);
      await waitFor(() => sentMails(t, owner.email).length === 1);
      const [notice] = sentMails(t, owner.email);
      expect(notice.subject).toContain(invitee.email);
      expect(notice.text).toContain(org.name);
    });

    it('does not tell the inviter when the teamInvite preference is off', async () => {
      const { user: owner, agent } = await orgWithMember(t, { tier: 'basic' });
      await agent.patch('/api/v1/org/notification-preferences').send({ teamInvite: false }).expect(200);
      const invitee = await createUser(t);
      await invite(agent, invitee.email).expect(200);
      const inviteeAgent = await signIn(t, invitee.email);
      await inviteeAgent
        .post('/api/v1/auth/accept-invite')
        .send({ token: await inviteToken(invitee.email) })
        .expect(200);
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(sentMails(t, owner.email)).toHaveLength(0);
    });

    it('creates one membership when the same invite is accepted twice at once', async () => {
      const { org, agent } = await orgWithMember(t, { tier: 'basic' });
      const invitee = await createUser(t);
      await invite(agent, invitee.email).expect(200);
      const token = await inviteToken(invitee.email);
      const inviteeAgent = await signIn(t, invitee.email);
      const results = await Promise.all(
        [1, 2].map(() => inviteeAgent.post('/api/v1/auth/accept-invite').send({ token })),
      );
      expect(results.map((r) => r.status)).toEqual([200, 200]);
      const memberships = await t.sql(`SELECT 1 FROM memberships WHERE organization_id = $1 AND user_id = $2`, [
        org.id,
        invitee.id,
      ]);
      expect(memberships).toHaveLength(1);
    });

    it('refuses another address (403), a revoked invite (404) and an expired one (410)', async () => {
      const { agent } = await orgWithMember(t, { tier: 'professional' });
      const stranger = await createUser(t);
      const strangerAgent = await signIn(t, stranger.email);

      const otherEmail = uniqueEmail('other');
      await invite(agent, otherEmail).expect(200);
      await strangerAgent
        .post('/api/v1/auth/accept-invite')
        .send({ token: await inviteToken(otherEmail) })
        .expect(403);

      const revokedFor = await createUser(t);
      const revoked = await invite(agent, revokedFor.email).expect(200);
      await agent.delete(`${INVITES}/${revoked.body.id}`).expect(204);
      const revokedAgent = await signIn(t, revokedFor.email);
      await revokedAgent
        .post('/api/v1/auth/accept-invite')
        .send({ token: await inviteToken(revokedFor.email) })
        .expect(404);

      const expiredFor = await createUser(t);
      const expired = await invite(agent, expiredFor.email).expect(200);
      await t.sql(`UPDATE invites SET expires_at = now() - interval '1 second' WHERE id = $1`, [expired.body.id]);
      const expiredAgent = await signIn(t, expiredFor.email);
      const gone = await expiredAgent
        .post('/api/v1/auth/accept-invite')
        .send({ token: await inviteToken(expiredFor.email) })
        .expect(410);
      expect(gone.body.code).toBe('gone');
      // The overdue invite is marked expired by that answer (not left pending for the job).
      const [row] = await t.sql<{ status: string }>(`SELECT status FROM invites WHERE id = $1`, [expired.body.id]);
      expect(row.status).toBe('expired');
    });
  });

  describe('invite expiry job', () => {
    it('pending → expired after 7 days, idempotently, and accept then answers 410', async () => {
      const { agent } = await orgWithMember(t, { tier: 'professional' });
      const invitee = await createUser(t);
      const overdue = await invite(agent, invitee.email).expect(200);
      const current = await invite(agent, uniqueEmail()).expect(200);
      await t.sql(`UPDATE invites SET expires_at = now() - interval '1 minute' WHERE id = $1`, [overdue.body.id]);

      const job = t.app.get(InviteExpiryJob);
      expect(await job.run()).toBeGreaterThanOrEqual(1);
      expect(await inviteStatus(overdue.body.id)).toBe('expired');
      expect(await inviteStatus(current.body.id)).toBe('pending');
      expect(await job.run()).toBe(0);

      const inviteeAgent = await signIn(t, invitee.email);
      await inviteeAgent
        .post('/api/v1/auth/accept-invite')
        .send({ token: await inviteToken(invitee.email) })
        .expect(410);
    });

    it('skips its round while another instance holds the job lock', async () => {
      const runner = t.dataSource.createQueryRunner();
      await runner.connect();
      try {
        await runner.query('SELECT pg_advisory_lock(727101)');
        expect(await t.app.get(InviteExpiryJob).run()).toBeNull();
        await runner.query('SELECT pg_advisory_unlock(727101)');
        expect(await t.app.get(InviteExpiryJob).run()).not.toBeNull();
      } finally {
        await runner.release();
      }
    });
  });

  describe('changing roles', () => {
    it('lets an Admin change a member role, answering the member and auditing', async () => {
      const { org, agent } = await orgWithMember(t, { tier: 'professional', role: 'admin' });
      const member = await createUser(t, { org, role: 'member' });
      const response = await agent.patch(`${MEMBERS}/${member.id}`).send({ role: 'viewer' }).expect(200);
      expect(response.body).toEqual({
        userId: member.id,
        email: member.email,
        role: 'viewer',
        joinedAt: expect.any(String),
      });
      const [audit] = await t.sql(
        `SELECT metadata FROM audit_logs WHERE organization_id = $1 AND action = 'member.role_changed'`,
        [org.id],
      );
      expect(audit.metadata).toEqual({ email: member.email, from: 'member', to: 'viewer' });
    });

    it('lets only an Owner grant or take away the Owner role', async () => {
      const org = await createOrg(t, { tier: 'professional' });
      const owner = await createUser(t, { org, role: 'owner' });
      const admin = await createUser(t, { org, role: 'admin' });
      const member = await createUser(t, { org, role: 'member' });
      const adminAgent = await signIn(t, admin.email);
      await adminAgent.patch(`${MEMBERS}/${member.id}`).send({ role: 'owner' }).expect(403);
      await adminAgent.patch(`${MEMBERS}/${owner.id}`).send({ role: 'admin' }).expect(403);
      const ownerAgent = await signIn(t, owner.email);
      await ownerAgent.patch(`${MEMBERS}/${member.id}`).send({ role: 'owner' }).expect(200);
      await ownerAgent.patch(`${MEMBERS}/${member.id}`).send({ role: 'member' }).expect(200);
    });

    it('keeps the last Owner (409) but lets one of two Owners step down', async () => {
      const { org, user: owner, agent } = await orgWithMember(t, { tier: 'professional' });
      const demoted = await agent.patch(`${MEMBERS}/${owner.id}`).send({ role: 'admin' }).expect(409);
      expect(demoted.body.code).toBe('conflict');
      const second = await createUser(t, { org, role: 'owner' });
      await agent.patch(`${MEMBERS}/${owner.id}`).send({ role: 'admin' }).expect(200);
      const secondAgent = await signIn(t, second.email);
      await secondAgent.patch(`${MEMBERS}/${second.id}`).send({ role: 'member' }).expect(409);
    });

    it('answers 404 for a non-member, 422 for an unknown role, 403 for a member caller', async () => {
      const { org, agent } = await orgWithMember(t, { tier: 'professional' });
      const stranger = await createUser(t);
      await agent.patch(`${MEMBERS}/${stranger.id}`).send({ role: 'viewer' }).expect(404);
      const member = await createUser(t, { org, role: 'member' });
      const invalid = await agent.patch(`${MEMBERS}/${member.id}`).send({ role: 'superuser' }).expect(422);
      expect(invalid.body.fields).toEqual([
        { field: 'role', message: expect.stringContaining('viewer, member, admin, owner') },
      ]);
      const memberAgent = await signIn(t, member.email);
      await memberAgent.patch(`${MEMBERS}/${member.id}`).send({ role: 'admin' }).expect(403);
    });
  });

  describe('removing members', () => {
    it('removes the membership with 204 and keeps the account; the removed user loses access', async () => {
      const { org, agent } = await orgWithMember(t, { tier: 'professional', role: 'admin' });
      const member = await createUser(t, { org, role: 'member' });
      const memberAgent = await signIn(t, member.email);
      await memberAgent.get(MEMBERS).expect(200);
      const personalKey = await createApiKey(t, org, ['org:read'], { type: 'gpat', createdBy: member.id });
      const serviceKey = await createApiKey(t, org, ['org:read'], { createdBy: member.id });

      await agent.delete(`${MEMBERS}/${member.id}`).expect(204);
      const [account] = await t.sql(`SELECT status FROM users WHERE id = $1`, [member.id]);
      expect(account).toEqual({ status: 'active' });
      expect(await t.sql(`SELECT 1 FROM memberships WHERE user_id = $1`, [member.id])).toHaveLength(0);
      expect((await memberAgent.get(MEMBERS).expect(403)).body.error).toMatch(/organization/i);
      await memberAgent.get('/api/v1/auth/me').expect(200);
      await t.http().get(MEMBERS).set('Authorization', `Bearer ${personalKey}`).expect(401);
      await t.http().get(MEMBERS).set('Authorization', `Bearer ${serviceKey}`).expect(200);
      expect(await auditActions(org.id)).toContain('member.removed');
    });

    it('refuses to remove an Owner (403) and answers 404 for a non-member', async () => {
      const org = await createOrg(t, { tier: 'professional' });
      const owner = await createUser(t, { org, role: 'owner' });
      const admin = await createUser(t, { org, role: 'admin' });
      const adminAgent = await signIn(t, admin.email);
      await adminAgent.delete(`${MEMBERS}/${owner.id}`).expect(403);
      await adminAgent.delete(`${MEMBERS}/${(await createUser(t)).id}`).expect(404);
      const ownerAgent = await signIn(t, owner.email);
      await ownerAgent.delete(`${MEMBERS}/${owner.id}`).expect(403);
    });
  });

  describe('API keys on team writes', () => {
    async function enterpriseOrg(): Promise<TestOrg> {
      const org = await createOrg(t, { tier: 'enterprise' });
      await createUser(t, { org, role: 'owner' });
      return org;
    }

    it('refuses an org:read key on writes with 403 naming admin:team', async () => {
      const org = await enterpriseOrg();
      const key = await createApiKey(t, org, ['org:read']);
      const refused = await t
        .http()
        .post(INVITES)
        .set('Authorization', `Bearer ${key}`)
        .send({ email: uniqueEmail(), role: 'member' })
        .expect(403);
      expect(refused.body.error).toContain('admin:team');
    });

    it('lets an admin:team key of an Enterprise organization invite (invitedBy null), revoke and manage members', async () => {
      const org = await enterpriseOrg();
      const key = await createApiKey(t, org, ['admin:team', 'org:read']);
      const sent = await t
        .http()
        .post(INVITES)
        .set('Authorization', `Bearer ${key}`)
        .send({ email: uniqueEmail(), role: 'member' })
        .expect(200);
      expect(sent.body.invitedBy).toBeNull();
      await t.http().delete(`${INVITES}/${sent.body.id}`).set('Authorization', `Bearer ${key}`).expect(204);
      const member = await createUser(t, { org, role: 'member' });
      await t
        .http()
        .patch(`${MEMBERS}/${member.id}`)
        .set('Authorization', `Bearer ${key}`)
        .send({ role: 'admin' })
        .expect(200);
      // Keys never grant the Owner role.
      await t
        .http()
        .patch(`${MEMBERS}/${member.id}`)
        .set('Authorization', `Bearer ${key}`)
        .send({ role: 'owner' })
        .expect(403);
      await t.http().delete(`${MEMBERS}/${member.id}`).set('Authorization', `Bearer ${key}`).expect(204);
    });

    it('stops honouring admin:team once the organization leaves Enterprise', async () => {
      const org = await enterpriseOrg();
      const key = await createApiKey(t, org, ['admin:team']);
      await setTier(t, org, 'professional');
      const refused = await t
        .http()
        .post(INVITES)
        .set('Authorization', `Bearer ${key}`)
        .send({ email: uniqueEmail(), role: 'member' })
        .expect(403);
      expect(refused.body.error).toContain('Enterprise');
    });
  });
});

async function waitFor(condition: () => boolean, timeoutMs = 3000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
