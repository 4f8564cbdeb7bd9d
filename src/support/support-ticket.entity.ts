import { Column, CreateDateColumn, Entity, PrimaryColumn, UpdateDateColumn } from 'typeorm';
import type { AuthorType } from '../feedback/feature-request.entity.js';

export const TICKET_STATUSES = ['open', 'awaiting_reply', 'resolved', 'closed'] as const;
export type TicketStatus = (typeof TICKET_STATUSES)[number];

export const TICKET_PRIORITIES = ['low', 'normal', 'high', 'urgent'] as const;
export type TicketPriority = (typeof TICKET_PRIORITIES)[number];

@Entity('support_tickets')
export class SupportTicket {
  @PrimaryColumn('uuid', { default: () => 'gen_random_uuid()' })
  id!: string;

  @Column('uuid', { name: 'organization_id' })
  organizationId!: string;

  @Column('uuid', { name: 'app_id', nullable: true })
  appId!: string | null;

  @Column('text')
  subject!: string;

  @Column('text')
  status!: TicketStatus;

  @Column('text')
  priority!: TicketPriority;

  @Column('text', { name: 'submitter_id' })
  submitterId!: string;

  @Column('text', { name: 'submitter_email', nullable: true })
  submitterEmail!: string | null;

  @Column('text', { name: 'device_hash', nullable: true })
  deviceHash!: string | null;

  @Column('integer', { name: 'message_count' })
  messageCount!: number;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt!: Date;
}

@Entity('support_ticket_messages')
export class SupportTicketMessage {
  @PrimaryColumn('uuid', { default: () => 'gen_random_uuid()' })
  id!: string;

  @Column('uuid', { name: 'organization_id' })
  organizationId!: string;

  @Column('uuid', { name: 'ticket_id' })
  ticketId!: string;

  @Column('text', { name: 'author_id' })
  authorId!: string;

  @Column('text', { name: 'author_type' })
  authorType!: AuthorType;

  @Column('text')
  body!: string;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}
