import { Global, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { OrganizationsService } from '../organizations/organizations.service.js';
import { Organization } from '../organizations/organization.entity.js';
import { Invite } from '../team/invite.entity.js';
import { RateLimitModule } from '../rate-limit/rate-limit.module.js';
import { AuthToken } from './auth-token.entity.js';
import { AuthTokensService } from './auth-tokens.service.js';
import { AuthController } from './auth.controller.js';
import { AuthService } from './auth.service.js';
import { CliSessionsController } from './cli-login/cli-sessions.controller.js';
import { CliSessionsService } from './cli-login/cli-sessions.service.js';
import { DeviceLoginController } from './device-login/device-login.controller.js';
import { DeviceLoginService } from './device-login/device-login.service.js';
import { BackgroundTasks } from '../common/scheduling/background-tasks.js';
import { ExpiredCredentialsJob } from './expired-credentials.job.js';
import { Membership } from './membership.entity.js';
import { SessionResolver } from './session-resolver.js';
import { User } from './user.entity.js';

@Global()
@Module({
  imports: [TypeOrmModule.forFeature([User, Membership, AuthToken, Organization, Invite]), RateLimitModule],
  controllers: [AuthController, CliSessionsController, DeviceLoginController],
  providers: [
    AuthService,
    AuthTokensService,
    CliSessionsService,
    DeviceLoginService,
    SessionResolver,
    OrganizationsService,
    ExpiredCredentialsJob,
    BackgroundTasks,
  ],
  exports: [SessionResolver, OrganizationsService, AuthTokensService, BackgroundTasks],
})
export class AuthModule {}
