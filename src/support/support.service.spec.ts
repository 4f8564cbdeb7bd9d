import { describe, expect, it } from '@jest/globals';
import type { Tenant } from '../apps/tenant-resolver.js';
import { PushOutbox } from '../push/push-outbox.js';
import { RecordedAudit } from '../../test/fakes/audit-entries.js';
import { memberAuth } from '../../test/fakes/org-auth.js';
import { FakePushDeliveriesRepository } from '../../test/fakes/push.js';
import { RecordedNotices } from '../../test/fakes/staff-notices.js';
import { FakeSupportRepository } from '../../test/fakes/support.js';
import { FakeUnitOfWork } from '../../test/fakes/unit-of-work.js';
import { SupportService } from './support.service.js';

const ORG = '00000000-0000-4000-8000-00000000000a';
const OTHER_ORG = '00000000-0000-4000-8000-00000000000b';
const APP = '00000000-0000-4000-8000-0000000000a1';
const OTHER_APP = '00000000-0000-4000-8000-0000000000a2';

const tenant = (organizationId: string, appId: string) => ({ organizationId, appId, appName: 'Shop' }) as Tenant;

function setup() {
  const uow = new FakeUnitOfWork();
  const tickets = new FakeSupportRepository();
  const audit = new RecordedAudit();
  const notices = new RecordedNotices();
  const deliveries = new FakePushDeliveriesRepository();
  const service = new SupportService(
    uow.asUnitOfWork(),
    tickets as never,
    audit.asAuditService(),
    notices.asStaffNotices(),
    new PushOutbox(deliveries as never),
  );
  return { uow, tickets, audit, notices, deliveries, service, sdk: tenant(ORG, APP), auth: memberAuth(ORG, 'staff-1') };
}

const opened = (service: SupportService, sdk: Tenant) =>
  service.create(sdk, {
    subject: 'Cannot pay',
    body: 'It fails',
    submitterId: 'user-a',
    submitterEmail: 'a@example.com',
  });

describe('SupportService', () => {
  it('opens a ticket with its first message and tells the admins once it is stored', async () => {
    const { service, sdk, notices } = setup();
    const { ticket, messages } = await opened(service, sdk);
    expect(ticket).toMatchObject({ status: 'open', priority: 'normal', messageCount: 1 });
    expect(messages.map((message) => [message.authorType, message.body])).toEqual([['user', 'It fails']]);
    expect(notices.sent).toEqual([expect.objectContaining({ to: 'admins', preference: 'newSupportTicket' })]);
  });

  it('lets only the submitter write, reopens a ticket the user answers, and refuses a closed one', async () => {
    const { service, sdk, auth, tickets } = setup();
    const { ticket } = await opened(service, sdk);
    await expect(
      service.postUserMessage(sdk, ticket.id, { authorId: 'someone-else', body: 'hi' }),
    ).rejects.toMatchObject({
      status: 403,
      code: 'not_ticket_submitter',
    });
    await service.reply(auth, ticket.id, 'Which card?');
    expect(tickets.tickets.get(ticket.id)!.status).toBe('awaiting_reply');
    await service.postUserMessage(sdk, ticket.id, { authorId: 'user-a', body: 'Visa' });
    expect(tickets.tickets.get(ticket.id)!.status).toBe('open');
    await service.setStatus(auth, ticket.id, 'closed');
    await expect(service.postUserMessage(sdk, ticket.id, { authorId: 'user-a', body: 'again' })).rejects.toMatchObject({
      status: 409,
      code: 'ticket_closed',
    });
  });

  it('pushes and mails a staff reply to the submitter, with its audit entry', async () => {
    const { service, sdk, auth, deliveries, notices, audit } = setup();
    const { ticket } = await opened(service, sdk);
    const reply = await service.reply(auth, ticket.id, 'Fixed');
    expect(reply).toMatchObject({ authorId: 'staff-1', authorType: 'admin' });
    expect(deliveries.enqueued).toEqual([expect.objectContaining({ appId: APP, subscriberIds: ['user-a'] })]);
    expect(deliveries.enqueued[0].payload).toMatchObject({ type: 'ticket_reply', ticketId: ticket.id });
    expect(notices.sent.at(-1)).toMatchObject({ to: 'a@example.com', preference: 'ticketAdminReply' });
    expect(audit.entries).toEqual([
      expect.objectContaining({ action: 'support_ticket.replied', metadata: { messageId: reply.id } }),
    ]);
  });

  it('pushes and mails the resolution once, records each real change, and nothing for the same value', async () => {
    const { service, sdk, auth, deliveries, notices, audit } = setup();
    const { ticket } = await opened(service, sdk);
    await service.setStatus(auth, ticket.id, 'resolved');
    await service.setStatus(auth, ticket.id, 'resolved');
    await service.setPriority(auth, ticket.id, 'high');
    await service.setPriority(auth, ticket.id, 'high');
    expect(deliveries.enqueued.map((push) => push.payload.type)).toEqual(['ticket_resolved']);
    expect(notices.sent.filter((mail) => mail.preference === 'ticketResolved')).toHaveLength(1);
    expect(audit.entries.map((entry) => [entry.action, entry.metadata])).toEqual([
      ['support_ticket.status_changed', { from: 'open', to: 'resolved' }],
      ['support_ticket.priority_changed', { from: 'normal', to: 'high' }],
    ]);
  });

  it('answers a ticket of another app or organization as not found', async () => {
    const { service, sdk } = setup();
    const { ticket } = await opened(service, sdk);
    await expect(service.sdkGet(tenant(ORG, OTHER_APP), ticket.id)).rejects.toMatchObject({ status: 404 });
    const stranger = memberAuth(OTHER_ORG, 'stranger');
    await expect(service.get(stranger, ticket.id)).rejects.toMatchObject({ status: 404 });
    await expect(service.reply(stranger, ticket.id, 'x')).rejects.toMatchObject({ status: 404 });
    await expect(service.setStatus(stranger, ticket.id, 'closed')).rejects.toMatchObject({ status: 404 });
  });
});
