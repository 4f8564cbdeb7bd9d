import { Global, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { TOKEN_CLAIMS_CONTRIBUTOR } from '../attestation/token.service.js';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { ClaimDefinitionsCache } from './claim-definitions-cache.js';
import { ClaimsController } from './claims.controller.js';
import { ClaimsService } from './claims.service.js';
import { ClaimsTokenContributor } from './claims-token-contributor.js';
import { ConsoleClaimsController } from './console-claims.controller.js';
import { ConsoleClaimsKeyGuard } from './console-claims-key.guard.js';
import { CustomClaim } from './custom-claim.entity.js';
import { ExternalClaimFetcher } from './engine/index.js';

/**
 * Custom claims: definitions on two surfaces, and the token contributor the attestation
 * module's TokenService picks up (global, so its optional injection resolves). The external
 * claim fetcher is one per application: it holds the value and OAuth2 token caches.
 */
@Global()
@Module({
  imports: [TypeOrmModule.forFeature([CustomClaim])],
  controllers: [ClaimsController, ConsoleClaimsController],
  providers: [
    ClaimsService,
    ClaimDefinitionsCache,
    ConsoleClaimsKeyGuard,
    {
      provide: ExternalClaimFetcher,
      useFactory: (config: AppConfig) =>
        new ExternalClaimFetcher({ allowPrivateNetworks: config.webhookAllowPrivateNetworks }),
      inject: [APP_CONFIG],
    },
    { provide: TOKEN_CLAIMS_CONTRIBUTOR, useClass: ClaimsTokenContributor },
  ],
  exports: [TOKEN_CLAIMS_CONTRIBUTOR],
})
export class ClaimsModule {}
