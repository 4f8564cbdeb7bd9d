import { Global, Module } from '@nestjs/common';
import { OrganizationsModule } from '../organizations/organizations.module.js';
import { InviteExpiryJob } from './invite-expiry.job.js';
import { InvitesController } from './invites.controller.js';
import { InvitesService } from './invites.service.js';
import { MembersController } from './members.controller.js';
import { MembersService } from './members.service.js';
import { TeamNotificationsService } from './team-notifications.service.js';

/**
 * Members and invites. Global so the invite acceptance (in the auth module) can tell the inviter
 * through TeamNotificationsService.
 */
@Global()
@Module({
  imports: [OrganizationsModule],
  controllers: [MembersController, InvitesController],
  providers: [MembersService, InvitesService, TeamNotificationsService, InviteExpiryJob],
  exports: [TeamNotificationsService],
})
export class TeamModule {}
