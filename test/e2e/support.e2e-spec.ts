import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { siblingApp } from '../factories/apps.js';
import { openTicket, type SdkTicket } from '../factories/support.js';
import { createApiKey, signedInMember } from '../factories/identity.js';
import { sentMails, startTestApp, type TestApp } from '../harness/test-app.js';
import { registerApp, sdk, type RegisteredApp } from '../support/sdk-client.js';

const TICKETS = '/api/v1/support/tickets';
const CONSOLE = '/api/v1/org/support';
const PREFERENCES = '/api/v1/org/notification-preferences';
const STATUSES = ['open', 'awaiting_reply', 'resolved', 'closed'];
const PRIORITIES = ['low', 'normal', 'high', 'urgent'];

describe('support tickets', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  const open = (app: RegisteredApp, body: Record<string, unknown> = {}) => openTicket(t, app, body);

  function userMessage(app: RegisteredApp, ticketId: string, body: Record<string, unknown>) {
    return sdk(t, app).post(`${TICKETS}/${ticketId}/messages`).send(body);
  }

  describe('SDK', () => {
    it('opens a ticket with its first message, in the documented camelCase form', async () => {
      const app = await registerApp(t);
      const response = await sdk(t, app)
        .post(TICKETS)
        .send({
          subject: 'Crash on launch',
          body: 'It crashes right after the splash screen.',
          submitterId: 'user-7',
          submitterEmail: 'user7@example.com',
          deviceHash: 'dev-7',
        })
        .expect(201);
      expect(response.body).toEqual({
        id: expect.any(String),
        subject: 'Crash on launch',
        status: 'open',
        priority: 'normal',
        messageCount: 1,
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
        messages: [
          {
            id: expect.any(String),
            ticketId: response.body.id,
            authorType: 'user',
            body: 'It crashes right after the splash screen.',
            createdAt: expect.any(String),
          },
        ],
      });
      const [row] = await t.sql(
        `SELECT organization_id, app_id, submitter_id, submitter_email, device_hash FROM support_tickets WHERE id = $1`,
        [response.body.id],
      );
      expect(row).toEqual({
        organization_id: app.org.id,
        app_id: app.id,
        submitter_id: 'user-7',
        submitter_email: 'user7@example.com',
        device_hash: 'dev-7',
      });
    });

    it('holds subject to 3-200 and body to 10-5,000 characters, and needs submitterId', async () => {
      const app = await registerApp(t);
      const base = { subject: 'Billing', body: '0123456789', submitterId: 'u' };
      await sdk(t, app).post(TICKETS).send(base).expect(201);
      await sdk(t, app)
        .post(TICKETS)
        .send({ ...base, subject: 'abc' })
        .expect(201);
      await sdk(t, app)
        .post(TICKETS)
        .send({ ...base, subject: 's'.repeat(200), body: 'b'.repeat(5000) })
        .expect(201);
      const cases: [Record<string, unknown>, string][] = [
        [{ ...base, subject: 'ab' }, 'subject'],
        [{ ...base, subject: 's'.repeat(201) }, 'subject'],
        [{ ...base, body: '012345678' }, 'body'],
        [{ ...base, body: 'b'.repeat(5001) }, 'body'],
        [{ subject: 'Billing', body: '0123456789' }, 'submitterId'],
        [{ ...base, submitterEmail: 'not-an-address' }, 'submitterEmail'],
      ];
      for (const [body, field] of cases) {
        const response = await sdk(t, app).post(TICKETS).send(body).expect(422);
        expect(response.body.fields[0].field).toBe(field);
      }
      await t.http().post(TICKETS).send(base).expect(400);
      expect((await sdk(t, { bundleId: 'com.example.nobody' }).post(TICKETS).send(base).expect(404)).body.code).toBe(
        'app_not_found',
      );
    });

    it("lists a submitter's tickets in this app, last updated first", async () => {
      const app = await registerApp(t);
      const older = await open(app, { submitterId: 'alice', subject: 'Older' });
      const newer = await open(app, { submitterId: 'alice', subject: 'Newer' });
      await open(app, { submitterId: 'bob' });
      await open(await siblingApp(app), { submitterId: 'alice' });
      const listed = await sdk(t, app).get(`${TICKETS}?submitter_id=alice`).expect(200);
      expect(listed.body.map((ticket: SdkTicket) => ticket.id)).toEqual([newer.id, older.id]);
      expect(listed.body[0]).toEqual({
        id: newer.id,
        subject: 'Newer',
        status: 'open',
        priority: 'normal',
        messageCount: 1,
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
      });
      await userMessage(app, older.id, { authorId: 'alice', body: 'Any news?' }).expect(201);
      const reordered = await sdk(t, app).get(`${TICKETS}?submitter_id=alice`).expect(200);
      expect(reordered.body.map((ticket: SdkTicket) => ticket.id)).toEqual([older.id, newer.id]);
      expect((await sdk(t, app).get(`${TICKETS}?submitter_id=nobody`).expect(200)).body).toEqual([]);
      expect((await sdk(t, app).get(TICKETS).expect(422)).body.fields[0].field).toBe('submitter_id');
    });

    it('shows a ticket with its messages oldest first, only to its own app', async () => {
      const app = await registerApp(t);
      const ticket = await open(app, { submitterId: 'carol' });
      await app.owner
        .post(`${CONSOLE}/${ticket.id}/messages`)
        .send({ body: 'Try resetting your password.' })
        .expect(201);
      const response = await sdk(t, app).get(`${TICKETS}/${ticket.id}`).expect(200);
      expect(response.body).toMatchObject({ id: ticket.id, status: 'awaiting_reply', messageCount: 2 });
      expect(response.body.messages.map((m: { authorType: string }) => m.authorType)).toEqual(['user', 'admin']);
      await sdk(t, await siblingApp(app))
        .get(`${TICKETS}/${ticket.id}`)
        .expect(404);
      await sdk(t, app).get(`${TICKETS}/${randomUUID()}`).expect(404);
      await sdk(t, app).get(`${TICKETS}/not-a-uuid`).expect(400);
    });

    it("takes the submitter's messages, reopening a ticket that waited or was resolved", async () => {
      const app = await registerApp(t);
      const ticket = await open(app, { submitterId: 'dan' });
      const posted = await userMessage(app, ticket.id, { authorId: 'dan', body: 'More details' }).expect(201);
      expect(posted.body).toEqual({
        id: expect.any(String),
        ticketId: ticket.id,
        authorType: 'user',
        body: 'More details',
        createdAt: expect.any(String),
      });
      await app.owner.post(`${CONSOLE}/${ticket.id}/messages`).send({ body: 'Which device?' }).expect(201);
      await userMessage(app, ticket.id, { authorId: 'dan', body: 'iPhone 15' }).expect(201);
      expect((await sdk(t, app).get(`${TICKETS}/${ticket.id}`)).body).toMatchObject({
        status: 'open',
        messageCount: 4,
      });
      await app.owner.post(`${CONSOLE}/${ticket.id}/status`).send({ status: 'resolved' }).expect(200);
      await userMessage(app, ticket.id, { authorId: 'dan', body: 'It broke again' }).expect(201);
      expect((await sdk(t, app).get(`${TICKETS}/${ticket.id}`)).body.status).toBe('open');

      expect((await userMessage(app, ticket.id, { authorId: 'mallory', body: 'Hi' }).expect(403)).body.code).toBe(
        'not_ticket_submitter',
      );
      expect((await userMessage(app, ticket.id, { body: 'Hi' }).expect(422)).body.fields[0].field).toBe('authorId');
      await userMessage(app, ticket.id, { authorId: 'dan', body: '' }).expect(422);
      await userMessage(app, ticket.id, { authorId: 'dan', body: 'b'.repeat(5001) }).expect(422);
      await userMessage(await siblingApp(app), ticket.id, { authorId: 'dan', body: 'Hi' }).expect(404);

      await app.owner.post(`${CONSOLE}/${ticket.id}/status`).send({ status: 'closed' }).expect(200);
      expect((await userMessage(app, ticket.id, { authorId: 'dan', body: 'Hello?' }).expect(409)).body.code).toBe(
        'ticket_closed',
      );
    });
  });

  describe('console', () => {
    it('lists tickets in the flat envelope, last updated first, in the snake_case form', async () => {
      const app = await registerApp(t);
      const first = await open(app, { subject: 'First', submitterId: 'eve', submitterEmail: 'eve@example.com' });
      const second = await open(app, { subject: 'Second' });
      const listed = await app.owner.get(CONSOLE).expect(200);
      expect(listed.body).toEqual({ items: [expect.any(Object), expect.any(Object)], page: 1, per: 20, total: 2 });
      expect(listed.body.items.map((ticket: { id: string }) => ticket.id)).toEqual([second.id, first.id]);
      expect(listed.body.items[1]).toEqual({
        id: first.id,
        app_id: app.id,
        subject: 'First',
        status: 'open',
        priority: 'normal',
        submitter_id: 'eve',
        submitter_email: 'eve@example.com',
        message_count: 1,
        created_at: expect.any(String),
        updated_at: expect.any(String),
      });
      await app.owner.post(`${CONSOLE}/${first.id}/priority`).send({ priority: 'high' }).expect(200);
      const reordered = await app.owner.get(CONSOLE).expect(200);
      expect(reordered.body.items.map((ticket: { id: string }) => ticket.id)).toEqual([first.id, second.id]);
      const paged = await app.owner.get(`${CONSOLE}?page=2&per=1`).expect(200);
      expect(paged.body).toMatchObject({
        page: 2,
        per: 1,
        total: 2,
        items: [expect.objectContaining({ id: second.id })],
      });
    });

    it('filters by status, priority and app, and searches subject or submitter e-mail', async () => {
      const app = await registerApp(t);
      const other = await siblingApp(app);
      const login = await open(app, { subject: 'Login LOOP', submitterEmail: 'frank@example.com' });
      const refund = await open(app, { subject: 'Refund please', submitterEmail: 'grace@shop.example' });
      const percent = await open(other, { subject: '50% discount missing' });
      await app.owner.post(`${CONSOLE}/${refund.id}/priority`).send({ priority: 'urgent' }).expect(200);
      await app.owner.post(`${CONSOLE}/${refund.id}/status`).send({ status: 'resolved' }).expect(200);
      const ids = async (query: string) =>
        (await app.owner.get(`${CONSOLE}?${query}`).expect(200)).body.items
          .map((ticket: { id: string }) => ticket.id)
          .sort() as string[];
      expect(await ids('status=open')).toEqual([login.id, percent.id].sort());
      expect(await ids('status=resolved')).toEqual([refund.id]);
      expect(await ids('priority=urgent')).toEqual([refund.id]);
      expect(await ids('priority=normal&status=open')).toEqual([login.id, percent.id].sort());
      expect(await ids(`app_id=${other.id}`)).toEqual([percent.id]);
      expect(await ids('search=login loop')).toEqual([login.id]);
      expect(await ids('search=SHOP.EXAMPLE')).toEqual([refund.id]);
      expect(await ids(`search=${encodeURIComponent('50%')}`)).toEqual([percent.id]);
      expect(await ids(`search=${encodeURIComponent('%')}`)).toEqual([percent.id]);
      expect(await ids('search=nothing')).toEqual([]);
    });

    it('answers invalid filters, pagination and ids with 400', async () => {
      const app = await registerApp(t);
      for (const query of [
        'status=pending',
        'priority=critical',
        'app_id=1',
        'page=0',
        'per=0',
        'per=101',
        'per=abc',
        'sort=votes',
      ]) {
        const response = await app.owner.get(`${CONSOLE}?${query}`);
        expect([query, response.status]).toEqual([query, 400]);
      }
      await app.owner.get(`${CONSOLE}/not-a-uuid`).expect(400);
      expect((await app.owner.get(`${CONSOLE}?per=100`).expect(200)).body.per).toBe(100);
    });

    it('shows a ticket with its messages oldest first', async () => {
      const app = await registerApp(t);
      const { user, agent } = await signedInMember(t, app.org, 'member');
      const ticket = await open(app, { submitterId: 'hank', body: 'First message here' });
      const reply = await agent.post(`${CONSOLE}/${ticket.id}/messages`).send({ body: 'Staff answer' }).expect(201);
      expect(reply.body).toEqual({
        id: expect.any(String),
        author_id: user.id,
        author_type: 'admin',
        body: 'Staff answer',
        created_at: expect.any(String),
      });
      const response = await agent.get(`${CONSOLE}/${ticket.id}`).expect(200);
      expect(response.body.ticket).toMatchObject({ id: ticket.id, status: 'awaiting_reply', message_count: 2 });
      expect(response.body.messages).toEqual([
        {
          id: expect.any(String),
          author_id: 'hank',
          author_type: 'user',
          body: 'First message here',
          created_at: expect.any(String),
        },
        reply.body,
      ]);
    });

    it('sets any status and priority, refusing unknown values with the accepted ones (400)', async () => {
      const app = await registerApp(t);
      const ticket = await open(app);
      for (const status of [...STATUSES.slice(1), 'open']) {
        expect((await app.owner.post(`${CONSOLE}/${ticket.id}/status`).send({ status }).expect(200)).body.status).toBe(
          status,
        );
      }
      for (const priority of PRIORITIES) {
        const response = await app.owner.post(`${CONSOLE}/${ticket.id}/priority`).send({ priority }).expect(200);
        expect(response.body).toMatchObject({ id: ticket.id, priority });
      }
      const badStatus = await app.owner.post(`${CONSOLE}/${ticket.id}/status`).send({ status: 'done' }).expect(400);
      expect(badStatus.body.error).toContain(STATUSES.join(', '));
      const badPriority = await app.owner.post(`${CONSOLE}/${ticket.id}/priority`).send({ priority: 'p1' }).expect(400);
      expect(badPriority.body.error).toContain(PRIORITIES.join(', '));
      await app.owner.post(`${CONSOLE}/${ticket.id}/priority`).send({}).expect(400);
      const audit = await t.sql(`SELECT action FROM audit_logs WHERE resource_id = $1 ORDER BY created_at`, [
        ticket.id,
      ]);
      expect(audit.filter((a) => a.action === 'support_ticket.status_changed')).toHaveLength(STATUSES.length);
    });

    it('takes staff replies of 1 to 10,000 characters and moves the ticket to awaiting_reply', async () => {
      const app = await registerApp(t);
      const ticket = await open(app);
      await app.owner.post(`${CONSOLE}/${ticket.id}/status`).send({ status: 'closed' }).expect(200);
      await app.owner
        .post(`${CONSOLE}/${ticket.id}/messages`)
        .send({ body: 'r'.repeat(10_000) })
        .expect(201);
      expect((await app.owner.get(`${CONSOLE}/${ticket.id}`)).body.ticket).toMatchObject({
        status: 'awaiting_reply',
        message_count: 2,
      });
      for (const body of [{ body: '' }, { body: ' \n ' }, {}, { body: 'r'.repeat(10_001) }]) {
        expect((await app.owner.post(`${CONSOLE}/${ticket.id}/messages`).send(body)).status).toBe(400);
      }
    });

    it("hides other organizations' tickets (404) and lets viewers only read", async () => {
      const app = await registerApp(t);
      const ticket = await open(app);
      const stranger = await registerApp(t);
      await stranger.owner.get(`${CONSOLE}/${ticket.id}`).expect(404);
      await stranger.owner.post(`${CONSOLE}/${ticket.id}/status`).send({ status: 'closed' }).expect(404);
      await stranger.owner.post(`${CONSOLE}/${ticket.id}/priority`).send({ priority: 'low' }).expect(404);
      await stranger.owner.post(`${CONSOLE}/${ticket.id}/messages`).send({ body: 'hi' }).expect(404);
      expect((await stranger.owner.get(CONSOLE).expect(200)).body.total).toBe(0);

      const viewer = (await signedInMember(t, app.org, 'viewer')).agent;
      await viewer.get(CONSOLE).expect(200);
      await viewer.get(`${CONSOLE}/${ticket.id}`).expect(200);
      await viewer.post(`${CONSOLE}/${ticket.id}/status`).send({ status: 'closed' }).expect(403);
      await viewer.post(`${CONSOLE}/${ticket.id}/priority`).send({ priority: 'low' }).expect(403);
      await viewer.post(`${CONSOLE}/${ticket.id}/messages`).send({ body: 'hi' }).expect(403);
      await t.http().get(CONSOLE).expect(401);
    });

    it('takes feedback:read keys for reads and feedback:manage keys for replies and triage', async () => {
      const app = await registerApp(t);
      const ticket = await open(app);
      const read = `Bearer ${await createApiKey(t, app.org, ['feedback:read'])}`;
      const manage = `Bearer ${await createApiKey(t, app.org, ['feedback:manage'])}`;
      await t.http().get(CONSOLE).set('Authorization', read).expect(200);
      await t.http().get(`${CONSOLE}/${ticket.id}`).set('Authorization', read).expect(200);
      await t
        .http()
        .post(`${CONSOLE}/${ticket.id}/messages`)
        .set('Authorization', read)
        .send({ body: 'hi' })
        .expect(403);
      await t
        .http()
        .post(`${CONSOLE}/${ticket.id}/priority`)
        .set('Authorization', manage)
        .send({ priority: 'high' })
        .expect(200);
      await t
        .http()
        .post(`${CONSOLE}/${ticket.id}/status`)
        .set('Authorization', manage)
        .send({ status: 'resolved' })
        .expect(200);
      const reply = await t
        .http()
        .post(`${CONSOLE}/${ticket.id}/messages`)
        .set('Authorization', manage)
        .send({ body: 'Done' })
        .expect(201);
      expect(reply.body.author_type).toBe('admin');
    });
  });

  describe('notifications', () => {
    it('mails Admins and Owners about a new ticket, only while newSupportTicket is on', async () => {
      const app = await registerApp(t);
      const admin = (await signedInMember(t, app.org, 'admin')).user;
      const member = (await signedInMember(t, app.org, 'member')).user;
      await open(app, { subject: 'Payment failed', submitterEmail: 'payer@example.com' });
      await waitFor(() => sentMails(t, admin.email).length === 1);
      const [mail] = sentMails(t, admin.email);
      expect(mail.subject).toContain('Payment failed');
      expect(mail.text).toContain('payer@example.com');
      expect(mail.links.some((link) => link.includes('/support/'))).toBe(true);
      expect(sentMails(t, member.email)).toHaveLength(0);
      await app.owner.patch(PREFERENCES).send({ newSupportTicket: false }).expect(200);
      await open(app, { subject: 'Muted' });
      await settle();
      expect(sentMails(t, admin.email)).toHaveLength(1);
    });

    it('mails Admins and Owners about a user reply, only while ticketUserReply is on', async () => {
      const app = await registerApp(t);
      const admin = (await signedInMember(t, app.org, 'admin')).user;
      await app.owner.patch(PREFERENCES).send({ newSupportTicket: false }).expect(200);
      const ticket = await open(app, { submitterId: 'ivy' });
      await userMessage(app, ticket.id, { authorId: 'ivy', body: 'Still broken' }).expect(201);
      await waitFor(() => sentMails(t, admin.email).length === 1);
      expect(sentMails(t, admin.email)[0].text).toContain('Still broken');
      await app.owner.patch(PREFERENCES).send({ ticketUserReply: false }).expect(200);
      await userMessage(app, ticket.id, { authorId: 'ivy', body: 'Hello?' }).expect(201);
      await settle();
      expect(sentMails(t, admin.email)).toHaveLength(1);
    });

    it('mails the submitter each staff reply, only while ticketAdminReply is on', async () => {
      const app = await registerApp(t);
      const submitter = `jane-${randomUUID().slice(0, 8)}@example.com`;
      const ticket = await open(app, { subject: 'Sync issue', submitterEmail: submitter });
      await app.owner.post(`${CONSOLE}/${ticket.id}/messages`).send({ body: 'Please update to 2.1' }).expect(201);
      await waitFor(() => sentMails(t, submitter).length === 1);
      const [mail] = sentMails(t, submitter);
      expect(mail.subject).toContain('Sync issue');
      expect(mail.text).toContain('Please update to 2.1');
      await app.owner.patch(PREFERENCES).send({ ticketAdminReply: false }).expect(200);
      await app.owner.post(`${CONSOLE}/${ticket.id}/messages`).send({ body: 'Any luck?' }).expect(201);
      await settle();
      expect(sentMails(t, submitter)).toHaveLength(1);
    });

    it('mails the submitter when the ticket is resolved, only while ticketResolved is on', async () => {
      const app = await registerApp(t);
      const submitter = `kim-${randomUUID().slice(0, 8)}@example.com`;
      const ticket = await open(app, { subject: 'Export broken', submitterEmail: submitter });
      await app.owner.post(`${CONSOLE}/${ticket.id}/status`).send({ status: 'closed' }).expect(200);
      await app.owner.post(`${CONSOLE}/${ticket.id}/status`).send({ status: 'resolved' }).expect(200);
      await waitFor(() => sentMails(t, submitter).length === 1);
      expect(sentMails(t, submitter)[0].subject).toContain('Resolved');
      await app.owner.post(`${CONSOLE}/${ticket.id}/status`).send({ status: 'resolved' }).expect(200);
      await settle();
      expect(sentMails(t, submitter)).toHaveLength(1);
      await app.owner.patch(PREFERENCES).send({ ticketResolved: false }).expect(200);
      await app.owner.post(`${CONSOLE}/${ticket.id}/status`).send({ status: 'open' }).expect(200);
      await app.owner.post(`${CONSOLE}/${ticket.id}/status`).send({ status: 'resolved' }).expect(200);
      await settle();
      expect(sentMails(t, submitter)).toHaveLength(1);
    });

    it('mails no submitter whose address is unknown', async () => {
      const app = await registerApp(t);
      const ticket = await open(app);
      const before = sentMails(t).length;
      await app.owner.patch(PREFERENCES).send({ newSupportTicket: false }).expect(200);
      await app.owner.post(`${CONSOLE}/${ticket.id}/messages`).send({ body: 'Hello' }).expect(201);
      await app.owner.post(`${CONSOLE}/${ticket.id}/status`).send({ status: 'resolved' }).expect(200);
      await settle();
      const owners = await t.sql<{ email: string }>(
        `SELECT u.email FROM memberships m JOIN users u ON u.id = m.user_id WHERE m.organization_id = $1`,
        [app.org.id],
      );
      const mails = sentMails(t)
        .slice(before)
        .filter((mail) => !owners.some((o) => o.email === mail.to));
      expect(mails.filter((mail) => mail.subject.includes('Cannot sign in'))).toEqual([]);
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

/** Gives a notice that should not be sent the time it would take to be written. */
function settle(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 400));
}
