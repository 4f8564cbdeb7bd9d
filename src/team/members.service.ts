import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';
import type { Role } from '../common/access/access.decorator.js';
import type { OrgAuthContext, SessionCaller } from '../common/access/auth-context.js';
import { conflict, forbidden, notFound } from '../common/errors/app-exception.js';
import { AuditService } from '../audit/audit.service.js';
import { ApiKeysService } from '../api-keys/api-keys.service.js';
import type { MemberRecord } from './team.dto.js';
import { membershipJoin, OrganizationsService } from '../organizations/organizations.service.js';
import { assertMayManageOwners, lockOrganizationForTeamWrite } from './team-policy.js';
import { UsersService, usersFrom } from '../users/users.service.js';
import { trustOrganizationId } from '../common/access/tenant-id.js';

interface MemberRow {
  user_id: string;
  email: string;
  role: Role;
  joined_at: Date;
}

/** The members of an organization: listing, role changes, removal. Accounts are never deleted here. */
@Injectable()
export class MembersService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly organizations: OrganizationsService,
    private readonly audit: AuditService,
    private readonly apiKeys: ApiKeysService,
    private readonly users: UsersService,
  ) {}

  /** Oldest join first. */
  async list(auth: OrgAuthContext): Promise<MemberRecord[]> {
    const rows: MemberRow[] = await this.dataSource.query(
      `SELECT u.id AS user_id, u.email, m.role, m.joined_at
         FROM ${usersFrom('u')} ${membershipJoin('m', 'u.id', '$1')}
        ORDER BY m.joined_at, m.id`,
      [auth.organizationId],
    );
    return rows.map(toMemberRecord);
  }

  /**
   * Only an Owner grants Owner or changes an Owner's role, and the last Owner keeps the role: the
   * organization row lock makes two Owners demoting each other at once leave one of them Owner.
   */
  async changeRole(auth: OrgAuthContext, userId: string, role: Role): Promise<MemberRecord> {
    return this.dataSource.transaction(async (manager) => {
      await lockOrganizationForTeamWrite(this.organizations, manager, auth);
      const member = await this.findMember(manager, auth.organizationId, userId);
      if (member.role === role) return member;
      if (role === 'owner' || member.role === 'owner') assertMayManageOwners(auth);
      if (member.role === 'owner' && (await this.organizations.ownerCount(auth.organizationId, manager)) <= 1) {
        throw conflict('The organization must keep at least one Owner', {
          hint: 'Make another member Owner first',
        });
      }
      await this.organizations.setRole(auth.organizationId, userId, role, manager);
      await this.audit.record(
        auth,
        {
          organizationId: auth.organizationId,
          action: 'member.role_changed',
          resourceType: 'member',
          resourceId: userId,
          metadata: { email: member.email, from: member.role, to: role },
        },
        manager,
      );
      return { ...member, role };
    });
  }

  /**
   * Removes the membership; the account stays. The member's personal (`gpat_`) keys of this
   * organization stop working with it, since they act for a person who is no longer a member.
   */
  async remove(auth: OrgAuthContext, userId: string): Promise<void> {
    await this.removeInTransaction(auth, userId);
    this.apiKeys.forgetWhere((key) => key.organizationId === auth.organizationId && key.createdBy === userId);
  }

  private async removeInTransaction(auth: OrgAuthContext, userId: string): Promise<void> {
    await this.dataSource.transaction(async (manager) => {
      await lockOrganizationForTeamWrite(this.organizations, manager, auth);
      const member = await this.findMember(manager, auth.organizationId, userId);
      if (member.role === 'owner') {
        throw forbidden('An Owner cannot be removed', { hint: 'Change their role first' });
      }
      await this.organizations.removeMember(auth.organizationId, userId, manager);
      await this.apiKeys.revokePersonalKeys(auth.organizationId, userId, manager);
      await this.audit.record(
        auth,
        {
          organizationId: auth.organizationId,
          action: 'member.removed',
          resourceType: 'member',
          resourceId: userId,
          metadata: { email: member.email, role: member.role },
        },
        manager,
      );
    });
  }

  /**
   * The caller leaves the organization. An Owner cannot (as an Owner cannot be removed); like a
   * removal, their personal keys of the organization are revoked with the membership.
   */
  async leave(caller: SessionCaller, organizationId: string, ipAddress: string | null): Promise<void> {
    const auth: OrgAuthContext = { caller, organizationId: trustOrganizationId(organizationId), ipAddress };
    await this.dataSource.transaction(async (manager) => {
      await this.organizations.lock(organizationId, manager);
      const member = await this.findMember(manager, organizationId, caller.userId);
      if (member.role === 'owner') {
        throw forbidden('An Owner cannot leave the organization', {
          hint: 'Make another member Owner, have them change your role, then leave',
        });
      }
      await this.organizations.removeMember(organizationId, caller.userId, manager);
      await this.apiKeys.revokePersonalKeys(organizationId, caller.userId, manager);
      await this.audit.record(
        auth,
        {
          organizationId,
          action: 'member.left',
          resourceType: 'member',
          resourceId: caller.userId,
          metadata: { email: member.email, role: member.role },
        },
        manager,
      );
    });
    this.apiKeys.forgetWhere((key) => key.organizationId === organizationId && key.createdBy === caller.userId);
  }

  /** The member with their address, the membership row locked until the transaction ends. */
  private async findMember(manager: EntityManager, organizationId: string, userId: string): Promise<MemberRecord> {
    const membership = await this.organizations.lockMember(organizationId, userId, manager);
    if (!membership) throw notFound('Member');
    const email = await this.users.addressOf(userId, manager);
    if (email === null) throw notFound('Member');
    return { userId, email, role: membership.role, joinedAt: membership.joinedAt };
  }
}

function toMemberRecord(row: MemberRow): MemberRecord {
  return { userId: row.user_id, email: row.email, role: row.role, joinedAt: row.joined_at };
}
