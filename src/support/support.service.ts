import { Injectable } from '@nestjs/common';
import type { Tenant } from '../apps/tenant-resolver.js';
import { AuditService } from '../audit/audit.service.js';
import type { OrgAuthContext } from '../common/access/auth-context.js';
import { UnitOfWork } from '../database/unit-of-work.js';
import { staffAuthorId, type Page } from '../feedback/feedback.service.js';
import { StaffNotices } from '../feedback/staff-notices.js';
import { oneLine } from '../common/one-line.js';
import type { PushNotice } from '../push/apns-payload.js';
import { PushOutbox } from '../push/push-outbox.js';
import { supportMail } from './support-mail.js';
import type { CreateTicketDto, SupportListQuery, UserMessageDto } from './support.dto.js';
import { notTicketSubmitter, ticketClosed, ticketNotFound } from './support.exceptions.js';
import type { SupportTicket, SupportTicketMessage, TicketPriority, TicketStatus } from './support-ticket.entity.js';
import { SupportRepository } from './support.repository.js';

export interface TicketWithMessages {
  ticket: SupportTicket;
  messages: SupportTicketMessage[];
}

/**
 * Support tickets: end users open them and write through the SDK (scoped to the app of the
 * identity headers); staff answer and triage them in the console (scoped to the organization).
 * Mails go out after the change commits.
 */
@Injectable()
export class SupportService {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly tickets: SupportRepository,
    private readonly audit: AuditService,
    private readonly notices: StaffNotices,
    private readonly push: PushOutbox,
  ) {}

  // ---- SDK ----

  create(tenant: Tenant, input: CreateTicketDto): Promise<TicketWithMessages> {
    return this.uow.run(async () => {
      const { ticket, message } = await this.tickets.create(tenant, {
        subject: input.subject,
        submitterId: input.submitterId,
        submitterEmail: input.submitterEmail ?? null,
        deviceHash: input.deviceHash ?? null,
        body: input.body,
      });
      const from = input.submitterEmail ?? input.submitterId;
      await this.uow.afterCommit(() =>
        this.notices.toAdmins(tenant.organizationId, 'newSupportTicket', (context) =>
          supportMail.newTicket(context, ticket, input.body, `${from} (${tenant.appName})`),
        ),
      );
      return { ticket, messages: [message] };
    });
  }

  /** The submitter's tickets in this app, last updated first. */
  listBySubmitter(tenant: Tenant, submitterId: string): Promise<SupportTicket[]> {
    return this.tickets.listBySubmitter(tenant, submitterId);
  }

  async sdkGet(tenant: Tenant, ticketId: string): Promise<TicketWithMessages> {
    const ticket = await this.tickets.findInApp(tenant, ticketId);
    if (!ticket) throw ticketNotFound();
    return { ticket, messages: await this.tickets.messages(ticket) };
  }

  /**
   * The submitter writes again: the ticket needs staff attention, so a ticket waiting for the
   * user or resolved becomes `open` again. A closed ticket takes no more messages.
   */
  postUserMessage(tenant: Tenant, ticketId: string, input: UserMessageDto): Promise<SupportTicketMessage> {
    return this.uow.run(async () => {
      const ticket = await this.tickets.findInApp(tenant, ticketId, { lock: true });
      if (!ticket) throw ticketNotFound();
      if (ticket.submitterId !== input.authorId) throw notTicketSubmitter();
      if (ticket.status === 'closed') throw ticketClosed();
      const message = await this.tickets.addMessage(
        ticket,
        { authorId: input.authorId, authorType: 'user', body: input.body },
        'open',
      );
      const from = ticket.submitterEmail ?? ticket.submitterId;
      await this.uow.afterCommit(() =>
        this.notices.toAdmins(tenant.organizationId, 'ticketUserReply', (context) =>
          supportMail.userReply(context, ticket, input.body, from),
        ),
      );
      return message;
    });
  }

  // ---- Console ----

  list(auth: OrgAuthContext, query: SupportListQuery): Promise<Page<SupportTicket>> {
    return this.tickets.page(auth.organizationId, query);
  }

  async get(auth: OrgAuthContext, ticketId: string): Promise<TicketWithMessages> {
    const ticket = await this.tickets.find(auth.organizationId, ticketId);
    if (!ticket) throw ticketNotFound();
    return { ticket, messages: await this.tickets.messages(ticket) };
  }

  /** Any state may follow any other; moving to `resolved` pushes to and mails the submitter (when known). */
  setStatus(auth: OrgAuthContext, ticketId: string, status: TicketStatus): Promise<SupportTicket> {
    return this.uow.run(async () => {
      const locked = await this.consoleTicket(auth, ticketId);
      const from = locked.status;
      if (from === status) return locked;
      const ticket = await this.tickets.setStatus(auth.organizationId, ticketId, status);
      if (status === 'resolved') {
        await this.pushToSubmitter(auth, locked, {
          title: `Resolved: “${oneLine(locked.subject)}”`,
          body: 'Your support request was marked resolved. Reply in the app if you still need help.',
          data: { type: 'ticket_resolved', ticketId: locked.id },
        });
      }
      await this.recordChange(auth, ticketId, 'status', from, status);
      const submitterEmail = ticket.submitterEmail;
      if (status === 'resolved' && submitterEmail) {
        await this.uow.afterCommit(() =>
          this.notices.toAddress(auth.organizationId, 'ticketResolved', submitterEmail, (context) =>
            supportMail.resolved(context, ticket),
          ),
        );
      }
      return ticket;
    });
  }

  setPriority(auth: OrgAuthContext, ticketId: string, priority: TicketPriority): Promise<SupportTicket> {
    return this.uow.run(async () => {
      const locked = await this.consoleTicket(auth, ticketId);
      const from = locked.priority;
      if (from === priority) return locked;
      const ticket = await this.tickets.setPriority(auth.organizationId, ticketId, priority);
      await this.recordChange(auth, ticketId, 'priority', from, priority);
      return ticket;
    });
  }

  /** A staff reply: the ticket waits for the user (`awaiting_reply`) and the submitter is mailed. */
  reply(auth: OrgAuthContext, ticketId: string, body: string): Promise<SupportTicketMessage> {
    return this.uow.run(async () => {
      const ticket = await this.consoleTicket(auth, ticketId);
      const message = await this.tickets.addMessage(
        ticket,
        { authorId: staffAuthorId(auth), authorType: 'admin', body },
        'awaiting_reply',
      );
      await this.pushToSubmitter(auth, ticket, {
        title: `Reply to “${oneLine(ticket.subject)}”`,
        body,
        data: { type: 'ticket_reply', ticketId: ticket.id, messageId: message.id },
      });
      await this.audit.record(auth, {
        organizationId: auth.organizationId,
        action: 'support_ticket.replied',
        resourceType: 'support_ticket',
        resourceId: ticketId,
        metadata: { messageId: message.id },
      });
      const submitterEmail = ticket.submitterEmail;
      if (submitterEmail) {
        await this.uow.afterCommit(() =>
          this.notices.toAddress(auth.organizationId, 'ticketAdminReply', submitterEmail, (context) =>
            supportMail.staffReply(context, ticket, body),
          ),
        );
      }
      return message;
    });
  }

  // ---- Shared ----

  private recordChange(
    auth: OrgAuthContext,
    ticketId: string,
    field: 'status' | 'priority',
    from: string,
    to: string,
  ): Promise<void> {
    return this.audit.record(auth, {
      organizationId: auth.organizationId,
      action: `support_ticket.${field}_changed`,
      resourceType: 'support_ticket',
      resourceId: ticketId,
      metadata: { from, to },
    });
  }

  /** The submitter's devices, when the app pushes (PushOutbox); in the unit of work of the change. */
  private pushToSubmitter(auth: OrgAuthContext, ticket: SupportTicket, notice: PushNotice): Promise<void> {
    return this.push.enqueue(auth.organizationId, { appId: ticket.appId, subscriberIds: [ticket.submitterId] }, notice);
  }

  private async consoleTicket(auth: OrgAuthContext, ticketId: string): Promise<SupportTicket> {
    const ticket = await this.tickets.find(auth.organizationId, ticketId, { lock: true });
    if (!ticket) throw ticketNotFound();
    return ticket;
  }
}
