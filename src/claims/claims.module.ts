import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AttestationModule } from '../attestation/attestation.module.js';
import { AuditModule } from '../audit/audit.module.js';
import { EntitlementsModule } from '../entitlements/entitlements.module.js';
import { OrganizationsModule } from '../organizations/organizations.module.js';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { ClaimDefinitionsCache } from './claim-definitions-cache.js';
import { ClaimsController } from './claims.controller.js';
import { ClaimsRepository } from './claims.repository.js';
import { ClaimsService } from './claims.service.js';
import { ClaimsTokenContributor } from './claims-token-contributor.js';
import { ConsoleClaimsController } from './console-claims.controller.js';
import { ConsoleClaimsKeyGuard } from './console-claims-key.guard.js';
import { CustomClaim } from './custom-claim.entity.js';
import { ExternalClaimFetcher } from './engine/index.js';

/**
 * Custom claims: definitions on two surfaces, and the token contributor (marked
 * `@ContributesTokenClaims()`) through which the attestation module's TokenService mints them. The external claim fetcher is one per
 * application: it holds the value and OAuth2 token caches.
 */
@Module({
  imports: [
    TypeOrmModule.forFeature([CustomClaim]),
    AuditModule,
    OrganizationsModule,
    EntitlementsModule,
    AttestationModule,
  ],
  controllers: [ClaimsController, ConsoleClaimsController],
  providers: [
    ClaimsService,
    ClaimsRepository,
    ClaimDefinitionsCache,
    ConsoleClaimsKeyGuard,
    {
      provide: ExternalClaimFetcher,
      useFactory: (config: AppConfig) =>
        new ExternalClaimFetcher({ allowPrivateNetworks: config.webhookAllowPrivateNetworks }),
      inject: [APP_CONFIG],
    },
    ClaimsTokenContributor,
  ],
})
export class ClaimsModule {}
