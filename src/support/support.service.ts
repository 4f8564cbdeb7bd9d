import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { Brackets, DataSource, type EntityManager } from 'typeorm';
import type { Tenant } from '../apps/tenant-resolver.js';
import { AuditService } from '../audit/audit.service.js';
import type { OrgAuthContext } from '../common/access/auth-context.js';
import { containsPattern } from '../common/search-pattern.js';
import { staffAuthorId, type Page } from '../feedback/feedback.service.js';
import { StaffNotices } from '../feedback/staff-notices.js';
import { oneLine } from '../common/one-line.js';
import type { PushNotice } from '../push/apns-payload.js';
import { PushOutbox } from '../push/push-outbox.js';
import { supportMail } from './support-mail.js';
import type { CreateTicketDto, SupportListQuery, UserMessageDto } from './support.dto.js';
import { notTicketSubmitter, ticketClosed, ticketNotFound } from './support.exceptions.js';
import {
  SupportTicket,
  SupportTicketMessage,
  type TicketPriority,
  type TicketStatus,
} from './support-ticket.entity.js';
import { pageWindow } from '../common/pagination.js';

export interface TicketWithMessages {
  ticket: SupportTicket;
  messages: SupportTicketMessage[];
}

/**
 * Support tickets: end users open them and write through the SDK (scoped to the app of the
 * identity headers); staff answer and triage them in the console (scoped to the organization).
 */
@Injectable()
export class SupportService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly audit: AuditService,
    private readonly notices: StaffNotices,
    private readonly push: PushOutbox,
  ) {}

  // ---- SDK ----

  async create(tenant: Tenant, input: CreateTicketDto): Promise<TicketWithMessages> {
    const created = await this.dataSource.transaction(async (manager) => {
      const ticket = await manager.save(
        manager.create(SupportTicket, {
          organizationId: tenant.organizationId,
          appId: tenant.appId,
          subject: input.subject,
          status: 'open',
          priority: 'normal',
          submitterId: input.submitterId,
          submitterEmail: input.submitterEmail ?? null,
          deviceHash: input.deviceHash ?? null,
          messageCount: 1,
        }),
      );
      const message = await manager.save(
        manager.create(SupportTicketMessage, {
          organizationId: tenant.organizationId,
          ticketId: ticket.id,
          authorId: input.submitterId,
          authorType: 'user',
          body: input.body,
        }),
      );
      return { ticket, messages: [message] };
    });
    const from = input.submitterEmail ?? input.submitterId;
    this.notices.toAdmins(tenant.organizationId, 'newSupportTicket', (context) =>
      supportMail.newTicket(context, created.ticket, input.body, `${from} (${tenant.appName})`),
    );
    return created;
  }

  /** The submitter's tickets in this app, last updated first. */
  listBySubmitter(tenant: Tenant, submitterId: string): Promise<SupportTicket[]> {
    return this.dataSource.getRepository(SupportTicket).find({
      where: { organizationId: tenant.organizationId, appId: tenant.appId, submitterId },
      order: { updatedAt: 'DESC', id: 'DESC' },
    });
  }

  async sdkGet(tenant: Tenant, ticketId: string): Promise<TicketWithMessages> {
    const ticket = await this.dataSource
      .getRepository(SupportTicket)
      .findOneBy({ id: ticketId, organizationId: tenant.organizationId, appId: tenant.appId });
    if (!ticket) throw ticketNotFound();
    return { ticket, messages: await this.messages(ticket.id) };
  }

  /**
   * The submitter writes again: the ticket needs staff attention, so a ticket waiting for the
   * user or resolved becomes `open` again. A closed ticket takes no more messages.
   */
  async postUserMessage(tenant: Tenant, ticketId: string, input: UserMessageDto): Promise<SupportTicketMessage> {
    const { ticket, message } = await this.dataSource.transaction(async (manager) => {
      const locked = await manager.findOne(SupportTicket, {
        where: { id: ticketId, organizationId: tenant.organizationId, appId: tenant.appId },
        lock: { mode: 'pessimistic_write' },
      });
      if (!locked) throw ticketNotFound();
      if (locked.submitterId !== input.authorId) throw notTicketSubmitter();
      if (locked.status === 'closed') throw ticketClosed();
      const saved = await this.addMessage(manager, locked, input.authorId, 'user', input.body, 'open');
      return { ticket: locked, message: saved };
    });
    const from = ticket.submitterEmail ?? ticket.submitterId;
    this.notices.toAdmins(tenant.organizationId, 'ticketUserReply', (context) =>
      supportMail.userReply(context, ticket, input.body, from),
    );
    return message;
  }

  // ---- Console ----

  async list(auth: OrgAuthContext, query: SupportListQuery): Promise<Page<SupportTicket>> {
    const builder = this.dataSource
      .getRepository(SupportTicket)
      .createQueryBuilder('support_tickets')
      .where('support_tickets.organization_id = :organizationId', { organizationId: auth.organizationId });
    if (query.status) builder.andWhere('support_tickets.status = :status', { status: query.status });
    if (query.priority) builder.andWhere('support_tickets.priority = :priority', { priority: query.priority });
    if (query.app_id) builder.andWhere('support_tickets.app_id = :appId', { appId: query.app_id });
    if (query.search) {
      builder.andWhere(
        new Brackets((search) =>
          search
            .where(`support_tickets.subject ILIKE :pattern ESCAPE '\\'`)
            .orWhere(`support_tickets.submitter_email ILIKE :pattern ESCAPE '\\'`),
        ),
        { pattern: containsPattern(query.search) },
      );
    }
    const { limit, offset } = pageWindow(query);
    const [items, total] = await builder
      .orderBy('support_tickets.updated_at', 'DESC')
      .addOrderBy('support_tickets.id', 'DESC')
      .skip(offset)
      .take(limit)
      .getManyAndCount();
    return { items, total };
  }

  async get(auth: OrgAuthContext, ticketId: string): Promise<TicketWithMessages> {
    const ticket = await this.dataSource
      .getRepository(SupportTicket)
      .findOneBy({ id: ticketId, organizationId: auth.organizationId });
    if (!ticket) throw ticketNotFound();
    return { ticket, messages: await this.messages(ticket.id) };
  }

  /** Any state may follow any other; moving to `resolved` mails the submitter (when known). */
  async setStatus(auth: OrgAuthContext, ticketId: string, status: TicketStatus): Promise<SupportTicket> {
    const { ticket, from } = await this.change(auth, ticketId, 'status', status);
    if (status === 'resolved' && from !== 'resolved' && ticket.submitterEmail) {
      this.notices.toAddress(auth.organizationId, 'ticketResolved', ticket.submitterEmail, (context) =>
        supportMail.resolved(context, ticket),
      );
    }
    return ticket;
  }

  async setPriority(auth: OrgAuthContext, ticketId: string, priority: TicketPriority): Promise<SupportTicket> {
    return (await this.change(auth, ticketId, 'priority', priority)).ticket;
  }

  /** A staff reply: the ticket waits for the user (`awaiting_reply`) and the submitter is mailed. */
  async reply(auth: OrgAuthContext, ticketId: string, body: string): Promise<SupportTicketMessage> {
    const { ticket, message } = await this.dataSource.transaction(async (manager) => {
      const locked = await this.consoleTicketIn(manager, auth, ticketId);
      const saved = await this.addMessage(manager, locked, staffAuthorId(auth), 'admin', body, 'awaiting_reply');
      await this.pushToSubmitter(manager, locked, {
        title: `Reply to “${oneLine(locked.subject)}”`,
        body,
        data: { type: 'ticket_reply', ticketId: locked.id, messageId: saved.id },
      });
      await this.audit.record(
        auth,
        {
          organizationId: auth.organizationId,
          action: 'support_ticket.replied',
          resourceType: 'support_ticket',
          resourceId: ticketId,
          metadata: { messageId: saved.id },
        },
        manager,
      );
      return { ticket: locked, message: saved };
    });
    if (ticket.submitterEmail) {
      this.notices.toAddress(auth.organizationId, 'ticketAdminReply', ticket.submitterEmail, (context) =>
        supportMail.staffReply(context, ticket, body),
      );
    }
    return message;
  }

  // ---- Shared ----

  private messages(ticketId: string): Promise<SupportTicketMessage[]> {
    return this.dataSource
      .getRepository(SupportTicketMessage)
      .find({ where: { ticketId }, order: { createdAt: 'ASC', id: 'ASC' } });
  }

  private async addMessage(
    manager: EntityManager,
    ticket: SupportTicket,
    authorId: string,
    authorType: 'user' | 'admin',
    body: string,
    status: TicketStatus,
  ): Promise<SupportTicketMessage> {
    const message = await manager.save(
      manager.create(SupportTicketMessage, {
        organizationId: ticket.organizationId,
        ticketId: ticket.id,
        authorId,
        authorType,
        body,
      }),
    );
    await manager.query(
      `UPDATE support_tickets SET message_count = message_count + 1, status = $2, updated_at = now() WHERE id = $1`,
      [ticket.id, status],
    );
    return message;
  }

  private async change<K extends 'status' | 'priority'>(
    auth: OrgAuthContext,
    ticketId: string,
    field: K,
    value: SupportTicket[K],
  ): Promise<{ ticket: SupportTicket; from: SupportTicket[K] }> {
    return this.dataSource.transaction(async (manager) => {
      const locked = await this.consoleTicketIn(manager, auth, ticketId);
      const from = locked[field];
      if (from === value) return { ticket: locked, from };
      await manager.query(`UPDATE support_tickets SET ${field} = $2, updated_at = now() WHERE id = $1`, [
        ticketId,
        value,
      ]);
      if (field === 'status' && value === 'resolved') {
        await this.pushToSubmitter(manager, locked, {
          title: `Resolved: “${oneLine(locked.subject)}”`,
          body: 'Your support request was marked resolved. Reply in the app if you still need help.',
          data: { type: 'ticket_resolved', ticketId: locked.id },
        });
      }
      await this.audit.record(
        auth,
        {
          organizationId: auth.organizationId,
          action: `support_ticket.${field}_changed`,
          resourceType: 'support_ticket',
          resourceId: ticketId,
          metadata: { from, to: value },
        },
        manager,
      );
      return { ticket: await manager.findOneByOrFail(SupportTicket, { id: ticketId }), from };
    });
  }

  /** The submitter's devices, when the app pushes (PushOutbox); in the transaction of the change. */
  private pushToSubmitter(manager: EntityManager, ticket: SupportTicket, notice: PushNotice): Promise<void> {
    return this.push.enqueue(
      manager,
      { organizationId: ticket.organizationId, appId: ticket.appId, subscriberIds: [ticket.submitterId] },
      notice,
    );
  }

  private async consoleTicketIn(manager: EntityManager, auth: OrgAuthContext, ticketId: string) {
    const ticket = await manager.findOne(SupportTicket, {
      where: { id: ticketId, organizationId: auth.organizationId },
      lock: { mode: 'pessimistic_write' },
    });
    if (!ticket) throw ticketNotFound();
    return ticket;
  }
}
