import { Module } from '@nestjs/common';
import { FlagsModule } from '../flags/flags.module.js';
import { RateLimitModule } from '../rate-limit/rate-limit.module.js';
import { OpenFeatureController } from './openfeature.controller.js';
import { OpenFeatureService } from './openfeature.service.js';

/** OpenFeature's remote evaluation protocol (OFREP) over the flags feature's store and kernel. */
@Module({
  imports: [FlagsModule, RateLimitModule],
  controllers: [OpenFeatureController],
  providers: [OpenFeatureService],
})
export class OpenFeatureModule {}
