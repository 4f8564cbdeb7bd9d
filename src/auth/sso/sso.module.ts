import { Module } from '@nestjs/common';
import { AuditModule } from '../../audit/audit.module.js';
import { MetricsModule } from '../../metrics/metrics.module.js';
import { OrganizationsModule } from '../../organizations/organizations.module.js';
import { RateLimitModule } from '../../rate-limit/rate-limit.module.js';
import { PasswordGateModule } from '../password-gate.module.js';
import { SsoConnectionsController } from './sso-connections.controller.js';
import { SsoConnectionsService } from './sso-connections.service.js';
import { SsoDeviceLoginController } from './sso-device-login.controller.js';
import { SsoSecrets } from './sso-secrets.js';
import { DnsTxtLookup } from './dns-txt-lookup.js';
import { SsoDomainRecheckJob } from './sso-domain-recheck.job.js';
import { SsoDomainsController } from './sso-domains.controller.js';
import { SsoDomainsService } from './sso-domains.service.js';
import { SsoSignInController } from './sso-sign-in.controller.js';
import { SsoSignInService } from './sso-sign-in.service.js';
import { TeamModule } from '../../team/team.module.js';
import { UsersModule } from '../../users/users.module.js';
import { SessionsModule } from '../session/sessions.module.js';
import { SsoDomainRecheckLock } from './sso-domain-recheck.repository.js';
import { SsoEnforcementModule } from './sso-enforcement.module.js';
import { SsoSignInRepository } from './sso-sign-in.repository.js';

/**
 * Enterprise single sign-on with OpenID Connect: the organization's connection, sign-in through
 * it, and the device-login page's way in. Password sign-in's enforcement check lives beside it
 * (`sso-enforcement.ts`) and is called by the auth service.
 */
@Module({
  imports: [
    RateLimitModule,
    PasswordGateModule,
    AuditModule,
    MetricsModule,
    OrganizationsModule,
    TeamModule,
    UsersModule,
    SessionsModule,
    SsoEnforcementModule,
  ],
  controllers: [SsoConnectionsController, SsoDomainsController, SsoSignInController, SsoDeviceLoginController],
  providers: [
    SsoConnectionsService,
    SsoDomainsService,
    DnsTxtLookup,
    SsoDomainRecheckJob,
    SsoSignInService,
    SsoSecrets,
    SsoSignInRepository,
    SsoDomainRecheckLock,
  ],
})
export class SsoModule {}
