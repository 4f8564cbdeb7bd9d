import { Global, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DomainEventsModule } from '../common/domain-events/domain-events.module.js';
import { DeviceEventDeliveries } from './device-event-deliveries.js';
import { WebhookDispatcher } from './webhook-dispatcher.js';
import { WebhookEndpoint } from './webhook-endpoint.entity.js';
import { WebhookEvents } from './webhook-events.js';
import { WebhookOutbox } from './webhook-outbox.js';
import { WebhooksController } from './webhooks.controller.js';
import { WebhooksService } from './webhooks.service.js';

/** Global: any feature may announce events through WebhookEvents (or the raw WebhookOutbox). */
@Global()
@Module({
  imports: [TypeOrmModule.forFeature([WebhookEndpoint]), DomainEventsModule],
  controllers: [WebhooksController],
  providers: [WebhooksService, WebhookOutbox, WebhookEvents, WebhookDispatcher, DeviceEventDeliveries],
  exports: [WebhookOutbox, WebhookEvents, WebhookDispatcher],
})
export class WebhooksModule {}
