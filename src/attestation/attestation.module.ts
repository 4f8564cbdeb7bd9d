import { ComplianceModule } from '../compliance/compliance.module.js';
import { Module } from '@nestjs/common';
import { AppsModule } from '../apps/apps.module.js';
import { AuditModule } from '../audit/audit.module.js';
import { DomainEventsModule } from '../common/domain-events/domain-events.module.js';
import { DevicesModule } from '../devices/devices.module.js';
import { MetricsModule } from '../metrics/metrics.module.js';
import { RiskAlertsModule } from '../risk-alerts/risk-alerts.module.js';
import { UsageModule } from '../usage/usage.module.js';
import { RateLimitModule } from '../rate-limit/rate-limit.module.js';
import { AndroidAttestationService } from './android-attestation.service.js';
import { AndroidIdentityController } from './android-identity.controller.js';
import { AndroidIdentityService } from './android-identity.service.js';
import { AttestationController, JwksController } from './attestation.controller.js';
import { AttestationService } from './attestation.service.js';
import { ChallengeService } from './challenge.service.js';
import { ChallengesRepository } from './challenges.repository.js';
import { DebugTokenDenySetSources } from './debug-token-deny-set-sources.js';
import { DebugTokensController } from './debug-tokens.controller.js';
import { DebugTokensRepository } from './debug-tokens.repository.js';
import { DebugTokensService } from './debug-tokens.service.js';
import { DeviceTokensModule } from '../device-tokens/device-tokens.module.js';
import { AdvisoryLocks } from '../database/advisory-lock.js';
import { DebugTokenRetentionJob } from './debug-token-retention.job.js';

@Module({
  imports: [
    DeviceTokensModule,
    RateLimitModule,
    AuditModule,
    MetricsModule,
    AppsModule,
    DevicesModule,
    DomainEventsModule,
    UsageModule,
    RiskAlertsModule,
    ComplianceModule,
  ],
  controllers: [AttestationController, JwksController, DebugTokensController, AndroidIdentityController],
  providers: [
    AttestationService,
    AndroidAttestationService,
    AndroidIdentityService,
    ChallengeService,
    DebugTokensService,
    DebugTokenDenySetSources,
    ChallengesRepository,
    DebugTokensRepository,
    DebugTokenRetentionJob,
    AdvisoryLocks,
  ],
  // Those importing attestation for device tokens (access, claims) get them as before.
  exports: [DeviceTokensModule],
})
export class AttestationModule {}
