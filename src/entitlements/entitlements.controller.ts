import { Body, Controller, HttpCode, Post } from '@nestjs/common';
import { Access } from '../common/access/access.decorator.js';
import { OrgAuth, type OrgAuthContext } from '../common/access/auth-context.js';
import { EntitlementEventDto } from './entitlements.dto.js';
import { EntitlementsService, toIngestResponse } from './entitlements.service.js';

/** Subscription events from the customer's server (or its payment integration), by API key. */
@Controller('api/v1/entitlements')
export class EntitlementsController {
  constructor(private readonly entitlements: EntitlementsService) {}

  /** 200 for a new event and for a redelivery alike (`duplicate` tells them apart). */
  @Post('events')
  @Access({ apiKey: ['entitlements:write'] })
  @HttpCode(200)
  async ingest(@OrgAuth() auth: OrgAuthContext, @Body() body: EntitlementEventDto) {
    return toIngestResponse(await this.entitlements.ingest(auth, body));
  }
}
