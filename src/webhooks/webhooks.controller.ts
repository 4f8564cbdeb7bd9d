import { Body, Controller, Delete, Get, HttpCode, Patch, Post, Query } from '@nestjs/common';
import { Access } from '../common/access/access.decorator.js';
import { OrgAuth, type OrgAuthContext } from '../common/access/auth-context.js';
import { UuidParam } from '../common/validation/uuid-param.js';
import { InvalidInputStatus } from '../common/validation/validation.js';
import { toCreatedWebhookEndpointResponse, toWebhookEndpointResponse } from './webhook-endpoint.entity.js';
import { CreateWebhookDto, DeliveriesQuery, UpdateWebhookDto } from './webhooks.dto.js';
import { WebhooksService } from './webhooks.service.js';

/**
 * Webhook endpoints of the session's organization: Admins and Owners, dashboard sessions only
 * (an API key is refused with 401), plans with webhooks only (403 on Free).
 */
@Controller('api/v1/org/webhooks')
@Access({ session: 'admin' })
@InvalidInputStatus(400)
export class WebhooksController {
  constructor(private readonly webhooks: WebhooksService) {}

  @Get()
  async list(@OrgAuth() auth: OrgAuthContext) {
    return (await this.webhooks.list(auth)).map(toWebhookEndpointResponse);
  }

  @Post()
  async create(@OrgAuth() auth: OrgAuthContext, @Body() body: CreateWebhookDto) {
    return toCreatedWebhookEndpointResponse(await this.webhooks.create(auth, body));
  }

  @Patch(':id')
  async update(@OrgAuth() auth: OrgAuthContext, @UuidParam('id') id: string, @Body() body: UpdateWebhookDto) {
    return toWebhookEndpointResponse(await this.webhooks.update(auth, id, body));
  }

  @Delete(':id')
  @HttpCode(204)
  async remove(@OrgAuth() auth: OrgAuthContext, @UuidParam('id') id: string): Promise<void> {
    await this.webhooks.remove(auth, id);
  }

  @Post(':id/test')
  @HttpCode(200)
  test(@OrgAuth() auth: OrgAuthContext, @UuidParam('id') id: string) {
    return this.webhooks.test(auth, id);
  }

  @Get(':id/deliveries')
  deliveries(@OrgAuth() auth: OrgAuthContext, @UuidParam('id') id: string, @Query() query: DeliveriesQuery) {
    return this.webhooks.deliveries(auth, id, query);
  }

  @Post(':id/deliveries/:deliveryId/retry')
  @HttpCode(202)
  retry(@OrgAuth() auth: OrgAuthContext, @UuidParam('id') id: string, @UuidParam('deliveryId') deliveryId: string) {
    return this.webhooks.retry(auth, id, deliveryId);
  }
}
