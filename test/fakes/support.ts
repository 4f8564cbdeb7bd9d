import { randomUUID } from 'node:crypto';
import type { Tenant } from '../../src/apps/tenant-resolver.js';
import type { OrganizationId } from '../../src/common/access/tenant-id.js';
import {
  SupportTicket,
  SupportTicketMessage,
  type TicketPriority,
  type TicketStatus,
} from '../../src/support/support-ticket.entity.js';
import type { SupportListQuery } from '../../src/support/support.dto.js';
import type { NewTicket, NewTicketMessage, SupportRepository } from '../../src/support/support.repository.js';

const copy = <T extends object>(row: T): T =>
  Object.assign(Object.create(Object.getPrototypeOf(row) as object) as T, row);

/** Support tickets and their messages in memory. */
export class FakeSupportRepository implements Pick<SupportRepository, keyof SupportRepository> {
  readonly tickets = new Map<string, SupportTicket>();
  readonly messageRows: SupportTicketMessage[] = [];

  create(tenant: Tenant, input: NewTicket) {
    const now = new Date();
    const ticket = Object.assign(new SupportTicket(), {
      id: randomUUID(),
      organizationId: tenant.organizationId,
      appId: tenant.appId,
      subject: input.subject,
      status: 'open',
      priority: 'normal',
      submitterId: input.submitterId,
      submitterEmail: input.submitterEmail,
      deviceHash: input.deviceHash,
      messageCount: 0,
      createdAt: now,
      updatedAt: now,
    });
    this.tickets.set(ticket.id, ticket);
    return this.addMessage(ticket, { authorId: input.submitterId, authorType: 'user', body: input.body }, 'open').then(
      (message) => ({ ticket: copy(this.tickets.get(ticket.id)!), message }),
    );
  }

  listBySubmitter(tenant: Tenant, submitterId: string) {
    return Promise.resolve(
      [...this.tickets.values()]
        .filter(
          (t) =>
            t.organizationId === tenant.organizationId && t.appId === tenant.appId && t.submitterId === submitterId,
        )
        .map(copy),
    );
  }

  findInApp(tenant: Tenant, ticketId: string) {
    const ticket = this.tickets.get(ticketId);
    return Promise.resolve(
      ticket && ticket.organizationId === tenant.organizationId && ticket.appId === tenant.appId ? copy(ticket) : null,
    );
  }

  find(organizationId: OrganizationId, ticketId: string) {
    const ticket = this.tickets.get(ticketId);
    return Promise.resolve(ticket && ticket.organizationId === organizationId ? copy(ticket) : null);
  }

  page(organizationId: OrganizationId, query: SupportListQuery) {
    const items = [...this.tickets.values()].filter(
      (t) =>
        t.organizationId === organizationId &&
        (!query.status || t.status === query.status) &&
        (!query.priority || t.priority === query.priority),
    );
    return Promise.resolve({ items: items.map(copy), total: items.length });
  }

  messages(ticket: SupportTicket) {
    return Promise.resolve(this.messageRows.filter((message) => message.ticketId === ticket.id).map(copy));
  }

  addMessage(ticket: SupportTicket, input: NewTicketMessage, status: TicketStatus) {
    const message = Object.assign(new SupportTicketMessage(), {
      id: randomUUID(),
      organizationId: ticket.organizationId,
      ticketId: ticket.id,
      ...input,
      createdAt: new Date(),
    });
    this.messageRows.push(message);
    const stored = this.tickets.get(ticket.id)!;
    stored.messageCount += 1;
    stored.status = status;
    return Promise.resolve(copy(message));
  }

  setStatus(organizationId: OrganizationId, ticketId: string, status: TicketStatus) {
    return Promise.resolve(copy(Object.assign(this.owned(organizationId, ticketId), { status })));
  }

  setPriority(organizationId: OrganizationId, ticketId: string, priority: TicketPriority) {
    return Promise.resolve(copy(Object.assign(this.owned(organizationId, ticketId), { priority })));
  }

  private owned(organizationId: string, ticketId: string): SupportTicket {
    const ticket = this.tickets.get(ticketId);
    if (!ticket || ticket.organizationId !== organizationId) throw new Error('no such ticket');
    return ticket;
  }
}
