import { Injectable } from '@nestjs/common';
import { Brackets } from 'typeorm';
import type { Tenant } from '../apps/tenant-resolver.js';
import type { OrganizationId } from '../common/access/tenant-id.js';
import { pageWindow } from '../common/pagination.js';
import { containsPattern } from '../common/search-pattern.js';
import { UnitOfWork } from '../database/unit-of-work.js';
import {
  SupportTicket,
  SupportTicketMessage,
  type TicketPriority,
  type TicketStatus,
} from './support-ticket.entity.js';
import type { SupportListQuery } from './support.dto.js';

/** A new ticket's fields: its first message is the submitter's `body`. */
export interface NewTicket {
  subject: string;
  submitterId: string;
  submitterEmail: string | null;
  deviceHash: string | null;
  body: string;
}

/** A message added to a ticket. */
export interface NewTicketMessage {
  authorId: string;
  authorType: 'user' | 'admin';
  body: string;
}

/**
 * The owner of `support_tickets` and `support_ticket_messages`. Console methods take the
 * caller's organization; the SDK's take the tenant the SDK's tenant resolver established, so a
 * ticket of another app or organization is as unknown as a missing one.
 */
@Injectable()
export class SupportRepository {
  constructor(private readonly uow: UnitOfWork) {}

  /** Opens a ticket in the tenant's app with its first message, `open` and `normal`. */
  async create(tenant: Tenant, input: NewTicket): Promise<{ ticket: SupportTicket; message: SupportTicketMessage }> {
    const manager = this.uow.manager();
    const ticket = await manager.save(
      manager.create(SupportTicket, {
        organizationId: tenant.organizationId,
        appId: tenant.appId,
        subject: input.subject,
        status: 'open',
        priority: 'normal',
        submitterId: input.submitterId,
        submitterEmail: input.submitterEmail,
        deviceHash: input.deviceHash,
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
    return { ticket, message };
  }

  /** The submitter's tickets in the tenant's app, last updated first. */
  listBySubmitter(tenant: Tenant, submitterId: string): Promise<SupportTicket[]> {
    return this.uow
      .manager()
      .getRepository(SupportTicket)
      .find({
        where: { organizationId: tenant.organizationId, appId: tenant.appId, submitterId },
        order: { updatedAt: 'DESC', id: 'DESC' },
      });
  }

  /** The tenant's app's ticket, or null; `lock` holds it FOR UPDATE until the unit of work ends. */
  findInApp(tenant: Tenant, ticketId: string, options: { lock?: boolean } = {}): Promise<SupportTicket | null> {
    return this.uow
      .manager()
      .getRepository(SupportTicket)
      .findOne({
        where: { id: ticketId, organizationId: tenant.organizationId, appId: tenant.appId },
        ...(options.lock ? { lock: { mode: 'pessimistic_write' as const } } : {}),
      });
  }

  /** The organization's ticket, or null; `lock` holds it FOR UPDATE until the unit of work ends. */
  find(
    organizationId: OrganizationId,
    ticketId: string,
    options: { lock?: boolean } = {},
  ): Promise<SupportTicket | null> {
    return this.uow
      .manager()
      .getRepository(SupportTicket)
      .findOne({
        where: { id: ticketId, organizationId },
        ...(options.lock ? { lock: { mode: 'pessimistic_write' as const } } : {}),
      });
  }

  /** One page of the organization's tickets by the console's filters, last updated first. */
  async page(
    organizationId: OrganizationId,
    query: SupportListQuery,
  ): Promise<{ items: SupportTicket[]; total: number }> {
    const builder = this.uow
      .manager()
      .getRepository(SupportTicket)
      .createQueryBuilder('support_tickets')
      .where('support_tickets.organization_id = :organizationId', { organizationId });
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

  /** The ticket's messages, oldest first (`ticket` as this repository read it). */
  messages(ticket: SupportTicket): Promise<SupportTicketMessage[]> {
    return this.uow
      .manager()
      .getRepository(SupportTicketMessage)
      .find({
        where: { ticketId: ticket.id, organizationId: ticket.organizationId },
        order: { createdAt: 'ASC', id: 'ASC' },
      });
  }

  /** Adds a message to `ticket` (as this repository read it), counting it and setting the ticket's status. */
  async addMessage(
    ticket: SupportTicket,
    input: NewTicketMessage,
    status: TicketStatus,
  ): Promise<SupportTicketMessage> {
    const manager = this.uow.manager();
    const message = await manager.save(
      manager.create(SupportTicketMessage, {
        organizationId: ticket.organizationId,
        ticketId: ticket.id,
        authorId: input.authorId,
        authorType: input.authorType,
        body: input.body,
      }),
    );
    await manager.query(
      `UPDATE support_tickets SET message_count = message_count + 1, status = $3, updated_at = now()
        WHERE id = $1 AND organization_id = $2`,
      [ticket.id, ticket.organizationId, status],
    );
    return message;
  }

  /** Sets the ticket's status and answers it as stored. */
  setStatus(organizationId: OrganizationId, ticketId: string, status: TicketStatus): Promise<SupportTicket> {
    return this.set(organizationId, ticketId, { status });
  }

  /** Sets the ticket's priority and answers it as stored. */
  setPriority(organizationId: OrganizationId, ticketId: string, priority: TicketPriority): Promise<SupportTicket> {
    return this.set(organizationId, ticketId, { priority });
  }

  private async set(
    organizationId: OrganizationId,
    ticketId: string,
    change: { status: TicketStatus } | { priority: TicketPriority },
  ): Promise<SupportTicket> {
    const [column, value] = 'status' in change ? ['status', change.status] : ['priority', change.priority];
    const manager = this.uow.manager();
    await manager.query(
      `UPDATE support_tickets SET ${column} = $3, updated_at = now() WHERE id = $1 AND organization_id = $2`,
      [ticketId, organizationId, value],
    );
    return manager.getRepository(SupportTicket).findOneByOrFail({ id: ticketId, organizationId });
  }
}
