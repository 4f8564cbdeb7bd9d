import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';
import type { Role } from '../common/access/access.decorator.js';
import type { OrgAuthContext } from '../common/access/auth-context.js';
import { conflict, notFound } from '../common/errors/app-exception.js';
import { seatsTaken } from './team.exceptions.js';
import { randomSecret, sha256Hex } from '../common/crypto.js';
import { tierDefinition } from '../common/tiers.js';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { AuditService } from '../audit/audit.service.js';
import { isUniqueViolation } from '../database/unique-violation.js';
import { MailService } from '../mail/mail.service.js';
import { mailTemplates } from '../mail/mail-templates.js';
import { Invite } from './invite.entity.js';
import { membershipJoin, OrganizationsService } from '../organizations/organizations.service.js';
import { assertMayManageOwners, lockOrganizationForTeamWrite } from './team-policy.js';
import { usersFrom } from '../users/users.service.js';

export const INVITE_TTL_MS = 7 * 24 * 60 * 60 * 1000;

/** Invitations to join an organization: each pending one holds a seat until accepted, revoked or expired. */
@Injectable()
export class InvitesService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly organizations: OrganizationsService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly audit: AuditService,
    private readonly mail: MailService,
  ) {}

  /** Pending invites, newest first; one past its expiry no longer counts even before the job marks it. */
  listPending(auth: OrgAuthContext): Promise<Invite[]> {
    return this.dataSource
      .getRepository(Invite)
      .createQueryBuilder('i')
      .where('i.organization_id = :organizationId', { organizationId: auth.organizationId })
      .andWhere(`i.status = 'pending' AND i.expires_at > now()`)
      .orderBy('i.created_at', 'DESC')
      .addOrderBy('i.id', 'DESC')
      .getMany();
  }

  /**
   * Seats are members plus pending invites, counted under the organization row lock, so two
   * invites sent at once can never both take the last seat.
   */
  async create(auth: OrgAuthContext, input: { email: string; role?: Role }): Promise<Invite> {
    const role = input.role ?? 'member';
    const email = input.email.trim();
    const token = randomSecret(32);
    const { invite, organizationName } = await this.dataSource.transaction(async (manager) => {
      const organization = await lockOrganizationForTeamWrite(this.organizations, manager, auth);
      if (role === 'owner') assertMayManageOwners(auth);
      await this.expireOverdue(manager, auth.organizationId);
      await this.assertNotMemberOrInvited(manager, auth.organizationId, email);
      const limit = tierDefinition(organization.serviceTier).limits.maxSeats;
      const used = await this.seatsUsed(manager, auth.organizationId);
      if (used >= limit) {
        throw seatsTaken(limit, used);
      }
      const created = manager.create(Invite, {
        organizationId: auth.organizationId,
        email,
        role,
        tokenHash: sha256Hex(token),
        status: 'pending',
        invitedBy: auth.caller.kind === 'session' ? auth.caller.userId : null,
        acceptedBy: null,
        acceptedAt: null,
        expiresAt: new Date(Date.now() + INVITE_TTL_MS),
      });
      try {
        await manager.save(created);
      } catch (error) {
        if (isUniqueViolation(error)) throw alreadyInvited();
        throw error;
      }
      await this.audit.record(
        auth,
        {
          organizationId: auth.organizationId,
          action: 'invite.created',
          resourceType: 'invite',
          resourceId: created.id,
          metadata: { email, role },
        },
        manager,
      );
      return { invite: created, organizationName: organization.name };
    });
    this.mail.sendLater({
      to: email,
      ...mailTemplates.invite(this.acceptLink(token), organizationName, role, auth.caller.email),
    });
    return invite;
  }

  /**
   * Frees the seat. Idempotent: revoking a revoked or expired invite changes nothing; an accepted
   * invite is a membership by now, which is removed as a member instead (409).
   */
  async revoke(auth: OrgAuthContext, inviteId: string): Promise<void> {
    await this.dataSource.transaction(async (manager) => {
      await lockOrganizationForTeamWrite(this.organizations, manager, auth);
      const invite = await manager.findOne(Invite, {
        where: { id: inviteId, organizationId: auth.organizationId },
        lock: { mode: 'pessimistic_write' },
      });
      if (!invite) throw notFound('Invite');
      switch (invite.status) {
        case 'revoked':
        case 'expired':
          return;
        case 'accepted':
          throw conflict('This invite has been accepted', { hint: 'Remove the member instead' });
        case 'pending':
          break;
      }
      if (invite.expiresAt.getTime() <= Date.now()) {
        await manager.update(Invite, { id: invite.id }, { status: 'expired' });
        return;
      }
      await manager.update(Invite, { id: invite.id }, { status: 'revoked' });
      await this.audit.record(
        auth,
        {
          organizationId: auth.organizationId,
          action: 'invite.revoked',
          resourceType: 'invite',
          resourceId: invite.id,
          metadata: { email: invite.email, role: invite.role },
        },
        manager,
      );
    });
  }

  /** Overdue invites stop holding a seat and stop blocking a new invite at once, not at the next job run. */
  private async expireOverdue(manager: EntityManager, organizationId: string): Promise<void> {
    await manager.query(
      `UPDATE invites SET status = 'expired', updated_at = now()
        WHERE organization_id = $1 AND status = 'pending' AND expires_at <= now()`,
      [organizationId],
    );
  }

  private async assertNotMemberOrInvited(manager: EntityManager, organizationId: string, email: string): Promise<void> {
    const [row] = await manager.query<{ member: boolean; invited: boolean }[]>(
      `SELECT EXISTS (SELECT 1 FROM ${usersFrom('u')} ${membershipJoin('m', 'u.id', '$1')}
                       WHERE lower(u.email) = lower($2)) AS member,
              EXISTS (SELECT 1 FROM invites
                       WHERE organization_id = $1 AND lower(email) = lower($2) AND status = 'pending') AS invited`,
      [organizationId, email],
    );
    if (row.member) throw conflict('That address already belongs to a member of this organization');
    if (row.invited) throw alreadyInvited();
  }

  private async seatsUsed(manager: EntityManager, organizationId: string): Promise<number> {
    const members = await this.organizations.memberCount(organizationId, manager);
    const [row] = await manager.query<{ pending: string }[]>(
      `SELECT count(*) AS pending FROM invites WHERE organization_id = $1 AND status = 'pending'`,
      [organizationId],
    );
    return members + Number(row.pending);
  }

  /** The accept page of the dashboard (BASE_URL when no separate dashboard origin is configured). */
  private acceptLink(token: string): string {
    const base = this.config.dashboardOrigins[0] ?? this.config.baseUrl;
    return `${base}/accept-invite?token=${encodeURIComponent(token)}`;
  }
}

function alreadyInvited() {
  return conflict('That address already has a pending invite', { hint: 'Revoke it first to send a new one' });
}
