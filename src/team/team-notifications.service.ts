import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { Logger } from 'pino';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { createLogger } from '../common/logging/logger.js';
import { MailService } from '../mail/mail.service.js';
import { NotificationPreferencesService } from '../organizations/notification-preferences.service.js';
import type { Invite } from './invite.entity.js';
import { inviteAcceptedMail } from './team-mail.js';
import { membershipJoin, organizationJoin } from '../organizations/organizations.service.js';
import { usersFrom } from '../users/users.service.js';

/** Notices about the team that go out after the change that caused them has committed. */
@Injectable()
export class TeamNotificationsService {
  private readonly logger: Logger;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly mail: MailService,
    private readonly preferences: NotificationPreferencesService,
  ) {
    this.logger = createLogger(config).child({ component: 'team-notifications' });
  }

  /**
   * Tells the inviter that the invite was accepted, when the organization's `teamInvite`
   * preference is on and the inviter is still an active member. Never waits and never fails the
   * acceptance; invites created by an API key have no inviter to tell.
   */
  inviteAccepted(invite: Pick<Invite, 'organizationId' | 'invitedBy' | 'email' | 'role'>): void {
    if (!invite.invitedBy) return;
    void this.notifyInviter(invite.organizationId, invite.invitedBy, invite.email, invite.role).catch(
      (error: unknown) => this.logger.error({ err: error }, 'invite acceptance notice failed'),
    );
  }

  private async notifyInviter(organizationId: string, inviterId: string, inviteeEmail: string, role: string) {
    const preferences = await this.preferences.get(organizationId);
    if (!preferences.teamInvite) return;
    const rows: { email: string; organization_name: string }[] = await this.dataSource.query(
      `SELECT u.email, o.name AS organization_name
         FROM ${usersFrom('u')}
         ${membershipJoin('m', 'u.id', '$2')}
         ${organizationJoin('o', '$2')}
        WHERE u.id = $1 AND u.status = 'active'`,
      [inviterId, organizationId],
    );
    const inviter = rows[0];
    if (!inviter) return;
    const membersUrl = `${this.config.dashboardOrigins[0] ?? this.config.baseUrl}/settings/team`;
    await this.mail.send({
      to: inviter.email,
      ...inviteAcceptedMail(inviter.organization_name, inviteeEmail, role, membersUrl),
    });
  }
}
