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
import { WebhookOutbox } from './webhook-outbox.js';
import { WebhooksController } from './webhooks.controller.js';
import { WebhooksService } from './webhooks.service.js';

/** Webhook endpoints and deliveries; features that announce events import it for WebhookEvents (or the raw WebhookOutbox). */
@Module({
  imports: [
    TypeOrmModule.forFeature([WebhookEndpoint]),
    AuditModule,
    MetricsModule,
    OrganizationsModule,
    DomainEventsModule,
  ],
  controllers: [WebhooksController],
  providers: [WebhooksService, WebhookOutbox, WebhookEvents, WebhookDispatcher, DeviceEventDeliveries],
  exports: [WebhookOutbox, WebhookEvents, WebhookDispatcher],
})
export class WebhooksModule {}
