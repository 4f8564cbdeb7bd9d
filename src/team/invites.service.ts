import { Inject, Injectable } from '@nestjs/common';
import type { Role } from '../common/access/access.decorator.js';
import type { OrgAuthContext } from '../common/access/auth-context.js';
import type { OrganizationId } from '../common/access/tenant-id.js';
import { conflict, notFound } from '../common/errors/app-exception.js';
import { seatsTaken } from './team.exceptions.js';
import { randomSecret, sha256Hex } from '../common/crypto.js';
import { tierDefinition } from '../common/tiers.js';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { AuditService } from '../audit/audit.service.js';
import { isUniqueViolation } from '../database/unique-violation.js';
import { UnitOfWork } from '../database/unit-of-work.js';
import { MailService } from '../mail/mail.service.js';
import { mailTemplates } from '../mail/mail-templates.js';
import type { Invite } from './invite.entity.js';
import { InvitesRepository } from './invites.repository.js';
import { OrganizationsService } from '../organizations/organizations.service.js';
import { assertMayManageOwners, lockOrganizationForTeamWrite } from './team-policy.js';
import { UsersService } from '../users/users.service.js';

export const INVITE_TTL_MS = 7 * 24 * 60 * 60 * 1000;

/** Invitations to join an organization: each pending one holds a seat until accepted, revoked or expired. */
@Injectable()
export class InvitesService {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly invites: InvitesRepository,
    private readonly organizations: OrganizationsService,
    private readonly users: UsersService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly audit: AuditService,
    private readonly mail: MailService,
  ) {}

  /** Pending invites, newest first; one past its expiry no longer counts even before the job marks it. */
  listPending(auth: OrgAuthContext): Promise<Invite[]> {
    return this.invites.listPending(auth.organizationId);
  }

  /**
   * Seats are members plus pending invites, counted under the organization row lock, so two
   * invites sent at once can never both take the last seat.
   */
  async create(auth: OrgAuthContext, input: { email: string; role?: Role }): Promise<Invite> {
    const role = input.role ?? 'member';
    const email = input.email.trim();
    const token = randomSecret(32);
    return this.uow.run(async () => {
      const organization = await lockOrganizationForTeamWrite(this.organizations, auth);
      if (role === 'owner') assertMayManageOwners(auth);
      // Overdue invites stop holding a seat and stop blocking a new invite at once, not at the next job run.
      await this.invites.expireOverdue(auth.organizationId);
      await this.assertNotMemberOrInvited(auth.organizationId, email);
      const limit = tierDefinition(organization.serviceTier).limits.maxSeats;
      const used =
        (await this.organizations.memberCount(auth.organizationId)) +
        (await this.invites.pendingCount(auth.organizationId));
      if (used >= limit) {
        throw seatsTaken(limit, used);
      }
      let created: Invite;
      try {
        created = await this.invites.insert(auth.organizationId, {
          email,
          role,
          tokenHash: sha256Hex(token),
          invitedBy: auth.caller.kind === 'session' ? auth.caller.userId : null,
          expiresAt: new Date(Date.now() + INVITE_TTL_MS),
        });
      } catch (error) {
        if (isUniqueViolation(error)) throw alreadyInvited();
        throw error;
      }
      await this.audit.record(auth, {
        organizationId: auth.organizationId,
        action: 'invite.created',
        resourceType: 'invite',
        resourceId: created.id,
        metadata: { email, role },
      });
      await this.uow.afterCommit(() =>
        this.mail.sendLater({
          to: email,
          ...mailTemplates.invite(this.acceptLink(token), organization.name, role, auth.caller.email),
        }),
      );
      return created;
    });
  }

  /**
   * Frees the seat. Idempotent: revoking a revoked or expired invite changes nothing; an accepted
   * invite is a membership by now, which is removed as a member instead (409).
   */
  async revoke(auth: OrgAuthContext, inviteId: string): Promise<void> {
    await this.uow.run(async () => {
      await lockOrganizationForTeamWrite(this.organizations, auth);
      const invite = await this.invites.lock(auth.organizationId, inviteId);
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
        await this.invites.setStatus(auth.organizationId, invite.id, 'expired');
        return;
      }
      await this.invites.setStatus(auth.organizationId, invite.id, 'revoked');
      await this.audit.record(auth, {
        organizationId: auth.organizationId,
        action: 'invite.revoked',
        resourceType: 'invite',
        resourceId: invite.id,
        metadata: { email: invite.email, role: invite.role },
      });
    });
  }

  private async assertNotMemberOrInvited(organizationId: OrganizationId, email: string): Promise<void> {
    const user = await this.users.findByEmail(email);
    if (user && (await this.organizations.roleOf(organizationId, user.id)) !== null) {
      throw conflict('That address already belongs to a member of this organization');
    }
    if (await this.invites.hasPending(organizationId, email)) throw alreadyInvited();
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
