import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AuditModule } from '../audit/audit.module.js';
import { DomainEventsModule } from '../common/domain-events/domain-events.module.js';
import { MetricsModule } from '../metrics/metrics.module.js';
import { OrganizationsModule } from '../organizations/organizations.module.js';
import { DeviceEventDeliveries } from './device-event-deliveries.js';
import { WebhookDispatcher } from './webhook-dispatcher.js';
import { WebhookEndpoint } from './webhook-endpoint.entity.js';
import { WebhookEvents } from './webhook-events.js';
import { WebhookDeliveriesRepository } from './webhook-deliveries.repository.js';
import { WebhookEndpointsRepository } from './webhook-endpoints.repository.js';
import { WebhookOutboxRepository } from './webhook-outbox.repository.js';
import { WebhooksController } from './webhooks.controller.js';
import { WebhooksService } from './webhooks.service.js';

/** Webhook endpoints and deliveries; features that announce events import it for WebhookEvents . */
@Module({
  imports: [
    TypeOrmModule.forFeature([WebhookEndpoint]),
    AuditModule,
    MetricsModule,
    OrganizationsModule,
    DomainEventsModule,
  ],
  controllers: [WebhooksController],
  providers: [
    WebhooksService,
    WebhookEndpointsRepository,
    WebhookDeliveriesRepository,
    WebhookOutboxRepository,
    WebhookEvents,
    WebhookDispatcher,
    DeviceEventDeliveries,
  ],
  exports: [WebhookEvents, WebhookDispatcher],
})
export class WebhooksModule {}
