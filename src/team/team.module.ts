import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { ApiKeysModule } from '../api-keys/api-keys.module.js';
import { AuditModule } from '../audit/audit.module.js';
import { AdvisoryLocks } from '../database/advisory-lock.js';
import { MailModule } from '../mail/mail.module.js';
import { OrganizationsModule } from '../organizations/organizations.module.js';
import { Invite } from './invite.entity.js';
import { InviteAcceptanceService } from './invite-acceptance.service.js';
import { InviteExpiryJob } from './invite-expiry.job.js';
import { InvitesController } from './invites.controller.js';
import { InvitesRepository } from './invites.repository.js';
import { InvitesService } from './invites.service.js';
import { MembersController } from './members.controller.js';
import { MembersService } from './members.service.js';
import { TeamNotificationsService } from './team-notifications.service.js';
import { UsersModule } from '../users/users.module.js';
import { TeamOrganizationRemoval } from './team-organization-removal.js';

/**
 * Members and invites, including accepting one (the auth feature's `POST /auth/accept-invite`
 * calls InviteAcceptanceService).
 */
@Module({
  imports: [
    TypeOrmModule.forFeature([Invite]),
    AuditModule,
    MailModule,
    OrganizationsModule,
    ApiKeysModule,
    UsersModule,
  ],
  controllers: [MembersController, InvitesController],
  providers: [
    InvitesRepository,
    AdvisoryLocks,
    MembersService,
    InvitesService,
    InviteAcceptanceService,
    TeamNotificationsService,
    InviteExpiryJob,
    TeamOrganizationRemoval,
  ],
  exports: [InviteAcceptanceService, MembersService],
})
export class TeamModule {}
