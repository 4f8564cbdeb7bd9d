import { Body, Controller, Get, HttpCode, Post, Query } from '@nestjs/common';
import { Access } from '../common/access/access.decorator.js';
import { OrgAuth, type OrgAuthContext } from '../common/access/auth-context.js';
import { UuidParam } from '../common/validation/uuid-param.js';
import { InvalidInputStatus } from '../common/validation/validation.js';
import {
  StaffReplyDto,
  SupportListQuery,
  TicketPriorityDto,
  TicketStatusDto,
  toConsoleMessage,
  toConsoleTicket,
} from './support.dto.js';
import { SupportService } from './support.service.js';
import { pageEnvelope } from '../common/pagination.js';

const READ = { session: 'viewer', apiKey: ['feedback:read'] } as const;
const MANAGE = { session: 'member', apiKey: ['feedback:manage'] } as const;

/** The staff console for support tickets (snake_case): viewers read, members answer and triage. */
@Controller('api/v1/org/support')
@InvalidInputStatus(400)
export class SupportController {
  constructor(private readonly support: SupportService) {}

  @Get()
  @Access(READ)
  async list(@OrgAuth() auth: OrgAuthContext, @Query() query: SupportListQuery) {
    const { items, total } = await this.support.list(auth, query);
    return pageEnvelope('flat', query, items.map(toConsoleTicket), total);
  }

  @Get(':ticketId')
  @Access(READ)
  async get(@OrgAuth() auth: OrgAuthContext, @UuidParam('ticketId') ticketId: string) {
    const { ticket, messages } = await this.support.get(auth, ticketId);
    return { ticket: toConsoleTicket(ticket), messages: messages.map(toConsoleMessage) };
  }

  @Post(':ticketId/status')
  @Access(MANAGE)
  @HttpCode(200)
  async setStatus(
    @OrgAuth() auth: OrgAuthContext,
    @UuidParam('ticketId') ticketId: string,
    @Body() body: TicketStatusDto,
  ) {
    return toConsoleTicket(await this.support.setStatus(auth, ticketId, body.status));
  }

  @Post(':ticketId/priority')
  @Access(MANAGE)
  @HttpCode(200)
  async setPriority(
    @OrgAuth() auth: OrgAuthContext,
    @UuidParam('ticketId') ticketId: string,
    @Body() body: TicketPriorityDto,
  ) {
    return toConsoleTicket(await this.support.setPriority(auth, ticketId, body.priority));
  }

  @Post(':ticketId/messages')
  @Access(MANAGE)
  async reply(@OrgAuth() auth: OrgAuthContext, @UuidParam('ticketId') ticketId: string, @Body() body: StaffReplyDto) {
    return toConsoleMessage(await this.support.reply(auth, ticketId, body.body));
  }
}
