import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AuditModule } from '../audit/audit.module.js';
import { DevicesModule } from '../devices/devices.module.js';
import { MailModule } from '../mail/mail.module.js';
import { MetricsModule } from '../metrics/metrics.module.js';
import { OrganizationsModule } from '../organizations/organizations.module.js';
import { WebhooksModule } from '../webhooks/webhooks.module.js';
import { RateLimitModule } from '../rate-limit/rate-limit.module.js';
import { FeatureFlag, FlagOverride } from './flag.entity.js';
import { FlagStore } from './flag-store.js';
import { FlagScheduleJob } from './flag-schedule.job.js';
import { FlagSchedulesService } from './flag-schedules.service.js';
import { ChangeRequestsController } from './change-requests.controller.js';
import { ChangeRequestsService } from './change-requests.service.js';
import { FlagsController } from './flags.controller.js';
import { FlagsService } from './flags.service.js';
import { SdkFlagsController } from './sdk-flags.controller.js';
import { AppsModule } from '../apps/apps.module.js';
import { ChangeRequestsRepository } from './change-requests.repository.js';
import { FlagSchedulesRepository } from './flag-schedules.repository.js';
import { FlagStoreRepository } from './flag-store.repository.js';
import { FlagsRepository } from './flags.repository.js';
import { SavepointsRepository } from './savepoints.repository.js';

@Module({
  imports: [
    TypeOrmModule.forFeature([FeatureFlag, FlagOverride]),
    RateLimitModule,
    AuditModule,
    MailModule,
    MetricsModule,
    OrganizationsModule,
    AppsModule,
    DevicesModule,
    WebhooksModule,
  ],
  controllers: [FlagsController, ChangeRequestsController, SdkFlagsController],
  providers: [
    FlagsService,
    FlagStore,
    FlagSchedulesService,
    FlagScheduleJob,
    ChangeRequestsService,
    FlagsRepository,
    FlagSchedulesRepository,
    ChangeRequestsRepository,
    FlagStoreRepository,
    SavepointsRepository,
  ],
  exports: [FlagsService, FlagStore],
})
export class FlagsModule {}
