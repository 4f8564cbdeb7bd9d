import { Module } from '@nestjs/common';
import { AttestationModule } from '../attestation/attestation.module.js';
import { DevicesModule } from '../devices/devices.module.js';
import { RateLimitModule } from '../rate-limit/rate-limit.module.js';
import { ConsumedTokensRepository } from './consumed-tokens.repository.js';
import { ConsumedTokensJob } from './consumed-tokens.job.js';
import { TokenVerificationService } from './token-verification.service.js';
import { TokensController } from './tokens.controller.js';
import { AppsModule } from '../apps/apps.module.js';

/** Backend verification of device tokens, with one-time use (`consume`). */
@Module({
  imports: [RateLimitModule, AppsModule, DevicesModule, AttestationModule],
  controllers: [TokensController],
  providers: [TokenVerificationService, ConsumedTokensJob, ConsumedTokensRepository],
})
export class TokensModule {}
