import type { OrganizationId } from '../common/access/tenant-id.js';
import { Inject, Injectable } from '@nestjs/common';
import type { Logger } from 'pino';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { createLogger } from '../common/logging/logger.js';
import { MailService } from '../mail/mail.service.js';
import { NotificationPreferencesService } from '../organizations/notification-preferences.service.js';
import type { Invite } from './invite.entity.js';
import { inviteAcceptedMail } from './team-mail.js';
import { OrganizationsService } from '../organizations/organizations.service.js';
import { UsersService } from '../users/users.service.js';

/** Notices about the team that go out after the change that caused them has committed. */
@Injectable()
export class TeamNotificationsService {
  private readonly logger: Logger;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly mail: MailService,
    private readonly preferences: NotificationPreferencesService,
    private readonly organizations: OrganizationsService,
    private readonly users: UsersService,
  ) {
    this.logger = createLogger(config).child({ component: 'team-notifications' });
  }

  /**
   * Tells the inviter that the invite was accepted, when the organization's `teamInvite`
   * preference is on and the inviter is still an active member. Never waits and never fails the
   * acceptance; invites created by an API key have no inviter to tell.
   */
  inviteAccepted(invite: Pick<Invite, 'invitedBy' | 'email' | 'role'> & { organizationId: OrganizationId }): void {
    if (!invite.invitedBy) return;
    void this.notifyInviter(invite.organizationId, invite.invitedBy, invite.email, invite.role).catch(
      (error: unknown) => this.logger.error({ err: error }, 'invite acceptance notice failed'),
    );
  }

  private async notifyInviter(organizationId: OrganizationId, inviterId: string, inviteeEmail: string, role: string) {
    const preferences = await this.preferences.get(organizationId);
    if (!preferences.teamInvite) return;
    // The inviter is told only while an active member of the organization.
    const organization = await this.organizations.find(organizationId);
    if (!organization || (await this.organizations.roleOf(organization.id, inviterId)) === null) return;
    const inviter = await this.users.findById(inviterId);
    if (inviter?.status !== 'active') return;
    const membersUrl = `${this.config.dashboardOrigins[0] ?? this.config.baseUrl}/settings/team`;
    await this.mail.send({
      to: inviter.email,
      ...inviteAcceptedMail(organization.name, inviteeEmail, role, membersUrl),
    });
  }
}
