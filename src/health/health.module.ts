import { Module } from '@nestjs/common';
import { AppsModule } from '../apps/apps.module.js';
import { DeviceTokensModule } from '../device-tokens/device-tokens.module.js';
import { FlagsModule } from '../flags/flags.module.js';
import { HealthController } from './health.controller.js';
import { HealthRepository } from './health.repository.js';
import { HealthService } from './health.service.js';
import { RedisProbe } from './redis-probe.js';

@Module({
  imports: [AppsModule, DeviceTokensModule, FlagsModule],
  controllers: [HealthController],
  providers: [HealthService, HealthRepository, RedisProbe],
})
export class HealthModule {}
