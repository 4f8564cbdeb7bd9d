import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { ApiKeysModule } from '../api-keys/api-keys.module.js';
import { AuditModule } from '../audit/audit.module.js';
import { MailModule } from '../mail/mail.module.js';
import { OrganizationsModule } from '../organizations/organizations.module.js';
import { RateLimitModule } from '../rate-limit/rate-limit.module.js';
import { TeamModule } from '../team/team.module.js';
import { AuthToken } from './auth-token.entity.js';
import { AuthTokensService } from './auth-tokens.service.js';
import { AuthController } from './auth.controller.js';
import { AuthService } from './auth.service.js';
import { PasswordGateModule } from './password-gate.module.js';
import { CliSessionsController } from './cli-login/cli-sessions.controller.js';
import { CliSessionsService } from './cli-login/cli-sessions.service.js';
import { DeviceLoginController } from './device-login/device-login.controller.js';
import { DeviceLoginService } from './device-login/device-login.service.js';
import { BackgroundTasks } from '../common/scheduling/background-tasks.js';
import { ExpiredCredentialsJob } from './expired-credentials.job.js';
import { SessionResolver } from './session-resolver.js';
import { SessionsAccountLifecycle } from './session/sessions-account-lifecycle.js';
import { UsersModule } from '../users/users.module.js';
import { AuthResponses } from './auth-response.js';
import { AuthTokensRepository } from './auth-tokens.repository.js';
import { CliSessionsRepository } from './cli-login/cli-sessions.repository.js';
import { ExpiredCredentialsRepository } from './expired-credentials.repository.js';
import { SessionsModule } from './session/sessions.module.js';
import { SsoEnforcementModule } from './sso/sso-enforcement.module.js';

/**
 * Credentials, sessions and keys of people: sign-up, sign-in, password and e-mail flows, the CLI
 * and device logins, and the session resolver the access guard reads. The accounts themselves
 * (the `users` table) are the users feature's, which auth stores credentials through and whose
 * deactivations end sessions here (SessionsAccountLifecycle). Organizations and memberships are
 * the organizations feature's; invites (and accepting one) the team feature's.
 */
@Module({
  imports: [
    TypeOrmModule.forFeature([AuthToken]),
    UsersModule,
    PasswordGateModule,
    RateLimitModule,
    AuditModule,
    MailModule,
    OrganizationsModule,
    TeamModule,
    ApiKeysModule,
    SessionsModule,
    SsoEnforcementModule,
  ],
  controllers: [AuthController, CliSessionsController, DeviceLoginController],
  providers: [
    AuthService,
    AuthTokensService,
    CliSessionsService,
    DeviceLoginService,
    SessionResolver,
    ExpiredCredentialsJob,
    BackgroundTasks,
    SessionsAccountLifecycle,
    AuthResponses,
    AuthTokensRepository,
    CliSessionsRepository,
    ExpiredCredentialsRepository,
  ],
  exports: [SessionResolver],
})
export class AuthModule {}
