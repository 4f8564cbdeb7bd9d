import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';
import type { Role } from '../common/access/access.decorator.js';
import type { SessionCaller } from '../common/access/auth-context.js';
import { forbidden, gone, notFound } from '../common/errors/app-exception.js';
import { sha256Hex } from '../common/crypto.js';
import { AuditService } from '../audit/audit.service.js';
import type { Organization } from '../organizations/organization.entity.js';
import { OrganizationsService } from '../organizations/organizations.service.js';
import { Invite } from './invite.entity.js';
import { TeamNotificationsService } from './team-notifications.service.js';
import { trustOrganizationId } from '../common/access/tenant-id.js';

/** The invitee's side of an invite: following the link joins the organization. */
@Injectable()
export class InviteAcceptanceService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly organizations: OrganizationsService,
    private readonly audit: AuditService,
    private readonly teamNotifications: TeamNotificationsService,
  ) {}

  /** The newest unexpired pending invite of the address, for a sign-in that joins without the link. */
  async pendingFor(
    organizationId: string,
    email: string,
    manager: EntityManager,
  ): Promise<{ id: string; role: Role } | null> {
    const [invite]: { id: string; role: Role }[] = await manager.query(
      `SELECT id, role FROM invites
        WHERE organization_id = $1 AND lower(email) = lower($2) AND status = 'pending' AND expires_at > now()
        ORDER BY created_at DESC LIMIT 1`,
      [organizationId, email],
    );
    return invite ?? null;
  }

  /** How many unexpired invites are pending (each holds a seat), in the caller's transaction. */
  async pendingCount(organizationId: string, manager: EntityManager): Promise<number> {
    const [row]: { n: number }[] = await manager.query(
      `SELECT count(*)::int AS n FROM invites WHERE organization_id = $1 AND status = 'pending' AND expires_at > now()`,
      [organizationId],
    );
    return row.n;
  }

  /** Records that `userId` joined through the invite, in the transaction that made them a member. */
  async markAccepted(organizationId: string, inviteId: string, userId: string, manager: EntityManager): Promise<void> {
    await manager.query(
      `UPDATE invites SET status = 'accepted', accepted_by = $3, accepted_at = now(), updated_at = now()
        WHERE id = $2 AND organization_id = $1`,
      [organizationId, inviteId, userId],
    );
  }

  /**
   * Joins the inviting organization. Idempotent for the user who accepted: a second call (even a
   * concurrent one) answers the same organization and creates no second membership.
   */
  async accept(caller: SessionCaller, token: string): Promise<Organization> {
    let accepted = null as Invite | null;
    const joined = await this.dataSource.transaction(async (manager): Promise<Organization | 'expired'> => {
      const invite = await manager
        .createQueryBuilder(Invite, 'i')
        .setLock('pessimistic_write')
        .where('i.token_hash = :hash', { hash: sha256Hex(token) })
        .getOne();
      if (!invite) throw notFound('Invite');
      const organization = await this.organizations.get(invite.organizationId, { manager });
      if (invite.status === 'accepted' && invite.acceptedBy === caller.userId) return organization;
      if (invite.status === 'accepted' || invite.status === 'revoked') throw notFound('Invite');
      if (invite.status === 'expired' || invite.expiresAt.getTime() <= Date.now()) {
        // Committed, not thrown from here: a throw would roll the `expired` status back with it.
        if (invite.status !== 'expired') await manager.update(Invite, { id: invite.id }, { status: 'expired' });
        return 'expired';
      }
      if (invite.email.toLowerCase() !== caller.email.toLowerCase()) {
        throw forbidden('This invite was sent to another e-mail address');
      }
      await this.organizations.addMember(invite.organizationId, caller.userId, invite.role, manager);
      await manager.update(
        Invite,
        { id: invite.id },
        { status: 'accepted', acceptedBy: caller.userId, acceptedAt: new Date() },
      );
      await this.audit.record(
        { caller, organizationId: trustOrganizationId(invite.organizationId), ipAddress: null },
        {
          organizationId: invite.organizationId,
          action: 'invite.accepted',
          resourceType: 'invite',
          resourceId: invite.id,
          metadata: { email: invite.email, role: invite.role },
        },
        manager,
      );
      accepted = invite;
      return organization;
    });
    if (joined === 'expired') throw gone('This invite has expired', { hint: 'Ask for a new invite' });
    // After the commit: the inviter hears of it once, and only if the membership really exists.
    if (accepted) this.teamNotifications.inviteAccepted(accepted);
    return joined;
  }
}
