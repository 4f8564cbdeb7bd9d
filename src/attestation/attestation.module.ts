import { Module } from '@nestjs/common';
import { RateLimitModule } from '../rate-limit/rate-limit.module.js';
import { MadService } from '../usage/mad.service.js';
import { AttestationController, JwksController } from './attestation.controller.js';
import { AttestationService } from './attestation.service.js';
import { ChallengeService } from './challenge.service.js';
import { SigningKeysService } from './signing-keys.service.js';
import { TokenService } from './token.service.js';

@Module({
  imports: [RateLimitModule],
  controllers: [AttestationController, JwksController],
  providers: [AttestationService, ChallengeService, SigningKeysService, TokenService, MadService],
  exports: [SigningKeysService, TokenService],
})
export class AttestationModule {}
