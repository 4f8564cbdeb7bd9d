import { Transform } from 'class-transformer';
import { IsEmail, IsIn, IsOptional, IsString, IsUUID, Length, Matches, MaxLength } from 'class-validator';
import { PageQuery } from '../common/pagination.js';
import {
  TICKET_PRIORITIES,
  TICKET_STATUSES,
  type SupportTicket,
  type SupportTicketMessage,
  type TicketPriority,
  type TicketStatus,
} from './support-ticket.entity.js';

const trim = ({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim() : value);

export const STAFF_REPLY_MAX = 10_000;
export const USER_MESSAGE_MAX = 5_000;

const statusMessage = { message: `status must be one of: ${TICKET_STATUSES.join(', ')}` };
const priorityMessage = { message: `priority must be one of: ${TICKET_PRIORITIES.join(', ')}` };

// ---- SDK surface (camelCase) ----

export class CreateTicketDto {
  @Transform(trim)
  @IsString()
  @Length(3, 200, { message: 'subject must be 3 to 200 characters' })
  subject!: string;

  @Transform(trim)
  @IsString()
  @Length(10, 5_000, { message: 'body must be 10 to 5000 characters' })
  body!: string;

  @Transform(trim)
  @IsString()
  @Length(1, 200, { message: 'submitterId is required (1 to 200 characters)' })
  submitterId!: string;

  @IsOptional()
  @Transform(trim)
  @IsEmail({}, { message: 'submitterEmail must be an e-mail address' })
  @MaxLength(320)
  submitterEmail?: string;

  @IsOptional()
  @IsString()
  @Length(1, 200, { message: 'deviceHash must be 1 to 200 characters' })
  deviceHash?: string;
}

export class SubmitterQuery {
  @Transform(trim)
  @IsString()
  @Length(1, 200, { message: 'submitter_id is required (1 to 200 characters)' })
  submitter_id!: string;
}

export class UserMessageDto {
  @Transform(trim)
  @IsString()
  @Length(1, 200, { message: 'authorId is required (1 to 200 characters)' })
  authorId!: string;

  @Transform(trim)
  @IsString()
  @Length(1, USER_MESSAGE_MAX, { message: `body must be 1 to ${USER_MESSAGE_MAX} characters` })
  body!: string;
}

// ---- Console (snake_case) ----

export class SupportListQuery extends PageQuery {
  @IsOptional()
  @IsIn(TICKET_STATUSES, statusMessage)
  status?: TicketStatus;

  @IsOptional()
  @IsIn(TICKET_PRIORITIES, priorityMessage)
  priority?: TicketPriority;

  @IsOptional()
  @IsUUID('all', { message: 'app_id must be a UUID' })
  app_id?: string;

  @IsOptional()
  @IsString()
  @MaxLength(200, { message: 'search must be at most 200 characters' })
  search?: string;
}

export class TicketStatusDto {
  @IsIn(TICKET_STATUSES, statusMessage)
  status!: TicketStatus;
}

export class TicketPriorityDto {
  @IsIn(TICKET_PRIORITIES, priorityMessage)
  priority!: TicketPriority;
}

export class StaffReplyDto {
  @IsString({ message: 'body must be a string' })
  @Matches(/\S/, { message: 'body must not be empty' })
  @MaxLength(STAFF_REPLY_MAX, { message: `body must be at most ${STAFF_REPLY_MAX} characters` })
  body!: string;
}

// ---- Responses ----

/** A support ticket on the console surface (snake_case). */
export interface ConsoleTicketResponse {
  id: string;
  app_id: string | null;
  subject: string;
  status: SupportTicket['status'];
  priority: SupportTicket['priority'];
  submitter_id: string;
  submitter_email: string | null;
  message_count: number;
  created_at: Date;
  updated_at: Date;
}

export function toConsoleTicket(ticket: SupportTicket): ConsoleTicketResponse {
  return {
    id: ticket.id,
    app_id: ticket.appId,
    subject: ticket.subject,
    status: ticket.status,
    priority: ticket.priority,
    submitter_id: ticket.submitterId,
    submitter_email: ticket.submitterEmail,
    message_count: ticket.messageCount,
    created_at: ticket.createdAt,
    updated_at: ticket.updatedAt,
  };
}

export interface ConsoleMessageResponse {
  id: string;
  author_id: string;
  author_type: SupportTicketMessage['authorType'];
  body: string;
  created_at: Date;
}

export function toConsoleMessage(message: SupportTicketMessage): ConsoleMessageResponse {
  return {
    id: message.id,
    author_id: message.authorId,
    author_type: message.authorType,
    body: message.body,
    created_at: message.createdAt,
  };
}

/** A support ticket as the app sees it. */
export interface SdkTicketResponse {
  id: string;
  subject: string;
  status: SupportTicket['status'];
  priority: SupportTicket['priority'];
  messageCount: number;
  createdAt: Date;
  updatedAt: Date;
}

export function toSdkTicket(ticket: SupportTicket): SdkTicketResponse {
  return {
    id: ticket.id,
    subject: ticket.subject,
    status: ticket.status,
    priority: ticket.priority,
    messageCount: ticket.messageCount,
    createdAt: ticket.createdAt,
    updatedAt: ticket.updatedAt,
  };
}

export interface SdkMessageResponse {
  id: string;
  ticketId: string;
  authorType: SupportTicketMessage['authorType'];
  body: string;
  createdAt: Date;
}

export function toSdkMessage(message: SupportTicketMessage): SdkMessageResponse {
  return {
    id: message.id,
    ticketId: message.ticketId,
    authorType: message.authorType,
    body: message.body,
    createdAt: message.createdAt,
  };
}

export interface SdkTicketWithMessagesResponse extends SdkTicketResponse {
  /** Oldest first. */
  messages: SdkMessageResponse[];
}

export function toSdkTicketWithMessages(
  ticket: SupportTicket,
  messages: SupportTicketMessage[],
): SdkTicketWithMessagesResponse {
  return { ...toSdkTicket(ticket), messages: messages.map(toSdkMessage) };
}
