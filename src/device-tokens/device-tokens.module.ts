import { Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { JwtModule } from '@nestjs/jwt';
import { AppsModule } from '../apps/apps.module.js';
import { DevicesModule } from '../devices/devices.module.js';
import { RateLimitModule } from '../rate-limit/rate-limit.module.js';
import { ConsumedTokensJob } from './consumed-tokens.job.js';
import { ConsumedTokensRepository } from './consumed-tokens.repository.js';
import { DeviceTokenVerifier } from './device-token-verifier.js';
import { SigningKeysRepository } from './signing-keys.repository.js';
import { SigningKeysService } from './signing-keys.service.js';
import { TokenService } from './token.service.js';
import { TokenVerificationService } from './token-verification.service.js';
import { TokensController } from './tokens.controller.js';

/**
 * Device tokens: the keys they are signed with, minting (TokenService, for attestation), verifying
 * them (DeviceTokenVerifier, for the access strategies), and backend verification with one-time
 * use (`POST /api/v1/tokens/verify`, `consume`).
 */
@Module({
  imports: [
    // Device tokens are signed and verified with per-call keys (the signing-key table), so no module secret.
    JwtModule.register({}),
    DiscoveryModule,
    RateLimitModule,
    AppsModule,
    DevicesModule,
  ],
  controllers: [TokensController],
  providers: [
    SigningKeysService,
    SigningKeysRepository,
    TokenService,
    DeviceTokenVerifier,
    TokenVerificationService,
    ConsumedTokensJob,
    ConsumedTokensRepository,
  ],
  exports: [SigningKeysService, TokenService, DeviceTokenVerifier],
})
export class DeviceTokensModule {}
