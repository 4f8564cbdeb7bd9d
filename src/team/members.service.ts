import { Injectable } from '@nestjs/common';
import type { Role } from '../common/access/access.decorator.js';
import type { OrgAuthContext, SessionCaller } from '../common/access/auth-context.js';
import type { OrganizationId } from '../common/access/tenant-id.js';
import { conflict, forbidden, notFound } from '../common/errors/app-exception.js';
import { AuditService } from '../audit/audit.service.js';
import { ApiKeysService } from '../api-keys/api-keys.service.js';
import { UnitOfWork } from '../database/unit-of-work.js';
import type { MemberRecord } from './team.dto.js';
import { OrganizationsService } from '../organizations/organizations.service.js';
import { assertMayManageOwners, lockOrganizationForTeamWrite } from './team-policy.js';
import { UsersService } from '../users/users.service.js';

/** The members of an organization: listing, role changes, removal. Accounts are never deleted here. */
@Injectable()
export class MembersService {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly organizations: OrganizationsService,
    private readonly audit: AuditService,
    private readonly apiKeys: ApiKeysService,
    private readonly users: UsersService,
  ) {}

  /** Oldest join first. */
  async list(auth: OrgAuthContext): Promise<MemberRecord[]> {
    const members: MemberRecord[] = [];
    for (const membership of await this.organizations.members(auth.organizationId)) {
      const email = await this.users.addressOf(membership.userId);
      if (email !== null) members.push({ ...membership, email });
    }
    return members;
  }

  /**
   * Only an Owner grants Owner or changes an Owner's role, and the last Owner keeps the role: the
   * organization row lock makes two Owners demoting each other at once leave one of them Owner.
   */
  async changeRole(auth: OrgAuthContext, userId: string, role: Role): Promise<MemberRecord> {
    return this.uow.run(async () => {
      await lockOrganizationForTeamWrite(this.organizations, auth);
      const member = await this.findMember(auth.organizationId, userId);
      if (member.role === role) return member;
      if (role === 'owner' || member.role === 'owner') assertMayManageOwners(auth);
      if (member.role === 'owner' && (await this.organizations.ownerCount(auth.organizationId)) <= 1) {
        throw conflict('The organization must keep at least one Owner', {
          hint: 'Make another member Owner first',
        });
      }
      await this.organizations.setRole(auth.organizationId, userId, role);
      await this.audit.record(auth, {
        organizationId: auth.organizationId,
        action: 'member.role_changed',
        resourceType: 'member',
        resourceId: userId,
        metadata: { email: member.email, from: member.role, to: role },
      });
      return { ...member, role };
    });
  }

  /**
   * Removes the membership; the account stays. The member's personal (`gpat_`) keys of this
   * organization stop working with it, since they act for a person who is no longer a member.
   */
  async remove(auth: OrgAuthContext, userId: string): Promise<void> {
    await this.uow.run(async () => {
      await lockOrganizationForTeamWrite(this.organizations, auth);
      const member = await this.findMember(auth.organizationId, userId);
      if (member.role === 'owner') {
        throw forbidden('An Owner cannot be removed', { hint: 'Change their role first' });
      }
      await this.organizations.removeMember(auth.organizationId, userId);
      await this.apiKeys.revokePersonalKeys(auth.organizationId, userId);
      await this.audit.record(auth, {
        organizationId: auth.organizationId,
        action: 'member.removed',
        resourceType: 'member',
        resourceId: userId,
        metadata: { email: member.email, role: member.role },
      });
    });
    this.apiKeys.forgetWhere((key) => key.organizationId === auth.organizationId && key.createdBy === userId);
  }

  /**
   * The caller leaves the organization. An Owner cannot (as an Owner cannot be removed); like a
   * removal, their personal keys of the organization are revoked with the membership.
   */
  async leave(caller: SessionCaller, organizationId: OrganizationId, ipAddress: string | null): Promise<void> {
    const auth: OrgAuthContext = { caller, organizationId, ipAddress };
    await this.uow.run(async () => {
      await this.organizations.lock(organizationId);
      const member = await this.findMember(organizationId, caller.userId);
      if (member.role === 'owner') {
        throw forbidden('An Owner cannot leave the organization', {
          hint: 'Make another member Owner, have them change your role, then leave',
        });
      }
      await this.organizations.removeMember(organizationId, caller.userId);
      await this.apiKeys.revokePersonalKeys(organizationId, caller.userId);
      await this.audit.record(auth, {
        organizationId,
        action: 'member.left',
        resourceType: 'member',
        resourceId: caller.userId,
        metadata: { email: member.email, role: member.role },
      });
    });
    this.apiKeys.forgetWhere((key) => key.organizationId === organizationId && key.createdBy === caller.userId);
  }

  /** The member with their address, the membership row locked until the unit of work ends. */
  private async findMember(organizationId: OrganizationId, userId: string): Promise<MemberRecord> {
    const membership = await this.organizations.lockMember(organizationId, userId);
    if (!membership) throw notFound('Member');
    const email = await this.users.addressOf(userId);
    if (email === null) throw notFound('Member');
    return { userId, email, role: membership.role, joinedAt: membership.joinedAt };
  }
}
