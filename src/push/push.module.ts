import { Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit.module.js';
import { PushCredentialsController, PushTokensController } from './push.controller.js';
import { PushCredentialsService } from './push-credentials.service.js';
import { PushDispatcher } from './push-dispatcher.js';
import { PushKey } from './push-key.js';
import { PushOutbox } from './push-outbox.js';
import { PushTokensService } from './push-tokens.service.js';
import { PushCredentialsRepository } from './push-credentials.repository.js';
import { PushDeliveriesRepository } from './push-deliveries.repository.js';
import { PushTokensRepository } from './push-tokens.repository.js';
import { AppsModule } from '../apps/apps.module.js';

/**
 * Push over APNs: app credentials, device registration, and delivery of what feedback and
 * support announce through PushOutbox.
 */
@Module({
  imports: [AuditModule, AppsModule],
  controllers: [PushCredentialsController, PushTokensController],
  providers: [
    PushCredentialsService,
    PushTokensService,
    PushOutbox,
    PushDispatcher,
    PushKey,
    PushCredentialsRepository,
    PushDeliveriesRepository,
    PushTokensRepository,
  ],
  exports: [PushOutbox],
})
export class PushModule {}
