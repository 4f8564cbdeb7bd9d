import { Module, type DynamicModule } from '@nestjs/common';
import { ScheduleModule } from '@nestjs/schedule';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AccessModule } from './auth/access.module.js';
import { ApiKeysModule } from './api-keys/api-keys.module.js';
import { AppsModule } from './apps/apps.module.js';
import { AttestationModule } from './attestation/attestation.module.js';
import { FlagsModule } from './flags/flags.module.js';
import { OpenFeatureModule } from './openfeature/openfeature.module.js';
import { UsageModule } from './usage/usage.module.js';
import { AuditModule } from './audit/audit.module.js';
import { AuthModule } from './auth/auth.module.js';
import { SsoModule } from './auth/sso/sso.module.js';
import { ClaimsModule } from './claims/claims.module.js';
import { BillingModule } from './billing/billing.module.js';
import { DevicesModule } from './devices/devices.module.js';
import { MailModule } from './mail/mail.module.js';
import { RateLimitModule } from './rate-limit/rate-limit.module.js';
import type { AppConfig } from './config/app-config.js';
import { AppConfigModule } from './config/config.module.js';
import { dataSourceOptions } from './database/data-source-options.js';
import { RelaxedCommitsModule } from './database/relaxed-commits.js';
import { UnitOfWorkModule } from './database/unit-of-work.js';
import { HealthModule } from './health/health.module.js';
import { MetricsModule } from './metrics/metrics.module.js';
import { OrganizationsModule } from './organizations/organizations.module.js';
import { TeamModule } from './team/team.module.js';
import { WebhooksModule } from './webhooks/webhooks.module.js';
import { EntitlementsModule } from './entitlements/entitlements.module.js';
import { FeedbackModule } from './feedback/feedback.module.js';
import { SupportModule } from './support/support.module.js';
import { ReleaseNotesModule } from './release-notes/release-notes.module.js';
import { ComplianceModule } from './compliance/compliance.module.js';
import { RiskAlertsModule } from './risk-alerts/risk-alerts.module.js';
import { OpenApiModule } from './openapi/openapi.module.js';
import { DeviceTokensModule } from './device-tokens/device-tokens.module.js';
import { PushModule } from './push/push.module.js';

@Module({})
export class AppModule {
  /** `databaseUrl` is resolved by then: the embedded server has been started if one was needed. */
  static forRoot(config: AppConfig & { databaseUrl: string }): DynamicModule {
    return {
      module: AppModule,
      imports: [
        AppConfigModule.forRoot(config),
        TypeOrmModule.forRoot({ ...dataSourceOptions(config.databaseUrl), autoLoadEntities: true }),
        RelaxedCommitsModule,
        UnitOfWorkModule,
        HealthModule,
        // The SDK's hot routes first: Express tries routes in registration order.
        FlagsModule,
        OpenFeatureModule,
        AttestationModule,
        MetricsModule,
        MailModule,
        AuditModule,
        RateLimitModule,
        ApiKeysModule,
        AuthModule,
        SsoModule,
        AppsModule,
        ClaimsModule,
        UsageModule,
        DevicesModule,
        ScheduleModule.forRoot(),
        OrganizationsModule,
        TeamModule,
        BillingModule,
        WebhooksModule,
        EntitlementsModule,
        FeedbackModule,
        SupportModule,
        ReleaseNotesModule,
        ComplianceModule,
        RiskAlertsModule,
        DeviceTokensModule,
        PushModule,
        OpenApiModule,
        AccessModule,
      ],
    };
  }
}
