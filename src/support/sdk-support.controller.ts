import { Body, Controller, Get, Post, Query, Req } from '@nestjs/common';
import type { Request } from 'express';
import { Access } from '../common/access/access.decorator.js';
import { UuidParam } from '../common/validation/uuid-param.js';
import {
  CreateTicketDto,
  SubmitterQuery,
  UserMessageDto,
  toSdkMessage,
  toSdkTicket,
  toSdkTicketWithMessages,
} from './support.dto.js';
import { SupportService } from './support.service.js';
import { RateLimit } from '../rate-limit/rate-limit.guard.js';

/** The SDK's support surface (camelCase): the identity headers name the app. */
@Controller('api/v1/support/tickets')
@Access({ tenant: true })
export class SdkSupportController {
  constructor(private readonly support: SupportService) {}

  @Post()
  @RateLimit('sdk-feedback-client', 'sdk-feedback-app')
  async create(@Req() request: Request, @Body() body: CreateTicketDto) {
    const { ticket, messages } = await this.support.create(request.tenant!, body);
    return toSdkTicketWithMessages(ticket, messages);
  }

  @Get()
  async list(@Req() request: Request, @Query() query: SubmitterQuery) {
    return (await this.support.listBySubmitter(request.tenant!, query.submitter_id)).map(toSdkTicket);
  }

  @Get(':ticketId')
  async get(@Req() request: Request, @UuidParam('ticketId') ticketId: string) {
    const { ticket, messages } = await this.support.sdkGet(request.tenant!, ticketId);
    return toSdkTicketWithMessages(ticket, messages);
  }

  @Post(':ticketId/messages')
  @RateLimit('sdk-feedback-client', 'sdk-feedback-app')
  async post(@Req() request: Request, @UuidParam('ticketId') ticketId: string, @Body() body: UserMessageDto) {
    return toSdkMessage(await this.support.postUserMessage(request.tenant!, ticketId, body));
  }
}
