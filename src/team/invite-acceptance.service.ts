import { Injectable } from '@nestjs/common';
import type { Role } from '../common/access/access.decorator.js';
import type { SessionCaller } from '../common/access/auth-context.js';
import type { OrganizationId } from '../common/access/tenant-id.js';
import { forbidden, gone, notFound } from '../common/errors/app-exception.js';
import { sha256Hex } from '../common/crypto.js';
import { AuditService } from '../audit/audit.service.js';
import { UnitOfWork } from '../database/unit-of-work.js';
import type { Organization } from '../organizations/organization.entity.js';
import { OrganizationsService } from '../organizations/organizations.service.js';
import { InvitesRepository } from './invites.repository.js';
import { TeamNotificationsService } from './team-notifications.service.js';

/**
 * The invitee's side of an invite: following the link joins the organization. `pendingFor`,
 * `pendingCount` and `markAccepted` serve single sign-on's join, in its unit of work.
 */
@Injectable()
export class InviteAcceptanceService {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly invites: InvitesRepository,
    private readonly organizations: OrganizationsService,
    private readonly audit: AuditService,
    private readonly teamNotifications: TeamNotificationsService,
  ) {}

  /** The newest unexpired pending invite of the address, for a sign-in that joins without the link. */
  pendingFor(organizationId: OrganizationId, email: string): Promise<{ id: string; role: Role } | null> {
    return this.invites.newestPendingFor(organizationId, email);
  }

  /** How many unexpired invites are pending (each holds a seat). */
  pendingCount(organizationId: OrganizationId): Promise<number> {
    return this.invites.unexpiredPendingCount(organizationId);
  }

  /** Records that `userId` joined through the invite, in the unit of work that made them a member. */
  markAccepted(organizationId: OrganizationId, inviteId: string, userId: string): Promise<void> {
    return this.invites.markAccepted(organizationId, inviteId, userId);
  }

  /**
   * Joins the inviting organization. Idempotent for the user who accepted: a second call (even a
   * concurrent one) answers the same organization and creates no second membership.
   */
  async accept(caller: SessionCaller, token: string): Promise<Organization> {
    const joined = await this.uow.run(async (): Promise<Organization | 'expired'> => {
      const invite = await this.invites.lockByTokenHash(sha256Hex(token));
      if (!invite) throw notFound('Invite');
      const organization = await this.organizations.get(invite.organizationId);
      if (invite.status === 'accepted' && invite.acceptedBy === caller.userId) return organization;
      if (invite.status === 'accepted' || invite.status === 'revoked') throw notFound('Invite');
      if (invite.status === 'expired' || invite.expiresAt.getTime() <= Date.now()) {
        // Committed, not thrown from here: a throw would roll the `expired` status back with it.
        if (invite.status !== 'expired') await this.invites.setStatus(invite.organizationId, invite.id, 'expired');
        return 'expired';
      }
      if (invite.email.toLowerCase() !== caller.email.toLowerCase()) {
        throw forbidden('This invite was sent to another e-mail address');
      }
      await this.organizations.addMember(invite.organizationId, caller.userId, invite.role);
      await this.invites.markAccepted(invite.organizationId, invite.id, caller.userId);
      await this.audit.record(
        { caller, organizationId: invite.organizationId, ipAddress: null },
        {
          organizationId: invite.organizationId,
          action: 'invite.accepted',
          resourceType: 'invite',
          resourceId: invite.id,
          metadata: { email: invite.email, role: invite.role },
        },
      );
      // After the commit: the inviter hears of it once, and only if the membership really exists.
      await this.uow.afterCommit(() => this.teamNotifications.inviteAccepted(invite));
      return organization;
    });
    if (joined === 'expired') throw gone('This invite has expired', { hint: 'Ask for a new invite' });
    return joined;
  }
}
