import { Global, Module } from '@nestjs/common';
import { JwtModule } from '@nestjs/jwt';
import { DomainEventsModule } from '../common/domain-events/domain-events.module.js';
import { DevicesModule } from '../devices/devices.module.js';
import { RateLimitModule } from '../rate-limit/rate-limit.module.js';
import { AttestationController, JwksController } from './attestation.controller.js';
import { AttestationService } from './attestation.service.js';
import { ChallengeService } from './challenge.service.js';
import { DebugTokensController } from './debug-tokens.controller.js';
import { DebugTokensService } from './debug-tokens.service.js';
import { DeviceTokenVerifier } from './device-token-verifier.js';
import { SigningKeysService } from './signing-keys.service.js';
import { TokenService } from './token.service.js';

@Global()
@Module({
  // Device tokens are signed and verified with per-call keys (the signing-key table), so no module secret.
  imports: [RateLimitModule, JwtModule.register({}), DevicesModule, DomainEventsModule],
  controllers: [AttestationController, JwksController, DebugTokensController],
  providers: [
    AttestationService,
    ChallengeService,
    SigningKeysService,
    TokenService,
    DeviceTokenVerifier,
    DebugTokensService,
  ],
  exports: [SigningKeysService, TokenService, DeviceTokenVerifier],
})
export class AttestationModule {}
