import { Module } from '@nestjs/common';
import { HealthController } from './health.controller.js';
import { HealthService } from './health.service.js';
import { RedisProbe } from './redis-probe.js';
import { TokenSigningProbe } from './token-signing-probe.js';

@Module({
  controllers: [HealthController],
  providers: [HealthService, TokenSigningProbe, RedisProbe],
})
export class HealthModule {}
