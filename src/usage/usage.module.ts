import { Global, Module } from '@nestjs/common';
import { MadService } from './mad.service.js';
import { UsageAlertsService } from './usage-alerts.service.js';
import { UsageCache } from './usage-cache.js';
import { UsageController } from './usage.controller.js';
import { UsageService } from './usage.service.js';

@Global()
@Module({
  controllers: [UsageController],
  providers: [UsageService, UsageCache, UsageAlertsService, MadService],
  exports: [MadService, UsageService],
})
export class UsageModule {}
