import { Injectable } from '@nestjs/common';
import type { Role } from '../common/access/access.decorator.js';
import { trustOrganizationId, type OrganizationId } from '../common/access/tenant-id.js';
import { queryRows } from '../database/sql.js';
import { UnitOfWork } from '../database/unit-of-work.js';
import { Invite, type InviteStatus } from './invite.entity.js';

/** An invite as read back with its token's row: the organization id carries the tenant brand. */
export type InviteRecord = Invite & { organizationId: OrganizationId };

/** What creating an invite writes. */
export interface NewInvite {
  email: string;
  role: Role;
  tokenHash: string;
  invitedBy: string | null;
  expiresAt: Date;
}

/**
 * The owner of `invites`. Statements run in the open unit of work.
 */
@Injectable()
export class InvitesRepository {
  constructor(private readonly uow: UnitOfWork) {}

  /** Pending invites not yet past their expiry, newest first. */
  listPending(organizationId: OrganizationId): Promise<Invite[]> {
    return this.uow
      .manager()
      .getRepository(Invite)
      .createQueryBuilder('i')
      .where('i.organization_id = :organizationId', { organizationId })
      .andWhere(`i.status = 'pending' AND i.expires_at > now()`)
      .orderBy('i.created_at', 'DESC')
      .addOrderBy('i.id', 'DESC')
      .getMany();
  }

  /** A new pending invite; a second pending one for the address is a unique violation. */
  async insert(organizationId: OrganizationId, invite: NewInvite): Promise<Invite> {
    const manager = this.uow.manager();
    const created = manager.create(Invite, {
      organizationId,
      email: invite.email,
      role: invite.role,
      tokenHash: invite.tokenHash,
      status: 'pending',
      invitedBy: invite.invitedBy,
      acceptedBy: null,
      acceptedAt: null,
      expiresAt: invite.expiresAt,
    });
    await manager.save(created);
    return created;
  }

  /** The invite, locked until the unit of work ends. */
  lock(organizationId: OrganizationId, inviteId: string): Promise<Invite | null> {
    return this.uow.manager().findOne(Invite, {
      where: { id: inviteId, organizationId },
      lock: { mode: 'pessimistic_write' },
    });
  }

  /** The invite a link's token names, whatever its organization, locked until the unit of work ends. */
  async lockByTokenHash(tokenHash: string): Promise<InviteRecord | null> {
    const invite = await this.uow
      .manager()
      .createQueryBuilder(Invite, 'i')
      .setLock('pessimistic_write')
      .where('i.token_hash = :hash', { hash: tokenHash })
      .getOne();
    return invite ? Object.assign(invite, { organizationId: trustOrganizationId(invite.organizationId) }) : null;
  }

  async setStatus(organizationId: OrganizationId, inviteId: string, status: Exclude<InviteStatus, 'accepted'>) {
    await this.uow.manager().update(Invite, { id: inviteId, organizationId }, { status });
  }

  /** Records that `userId` joined through the invite. */
  async markAccepted(organizationId: OrganizationId, inviteId: string, userId: string): Promise<void> {
    await this.uow.manager().query(
      `UPDATE invites SET status = 'accepted', accepted_by = $3, accepted_at = now(), updated_at = now()
        WHERE id = $2 AND organization_id = $1`,
      [organizationId, inviteId, userId],
    );
  }

  /** Overdue invites of the organization stop holding a seat at once, not at the next job run. */
  async expireOverdue(organizationId: OrganizationId): Promise<void> {
    await this.uow.manager().query(
      `UPDATE invites SET status = 'expired', updated_at = now()
        WHERE organization_id = $1 AND status = 'pending' AND expires_at <= now()`,
      [organizationId],
    );
  }

  /** Every organization's overdue invites, as the expiry job marks them; answers how many. */
  async expireAllOverdue(): Promise<number> {
    const expired = await queryRows(
      this.uow.manager(),
      `UPDATE invites SET status = 'expired', updated_at = now()
        WHERE status = 'pending' AND expires_at <= now()
      RETURNING id`,
    );
    return expired.length;
  }

  /** Revokes the pending invites of organizations that are going away. */
  async revokePending(organizationIds: readonly OrganizationId[]): Promise<void> {
    await this.uow.manager().query(
      `UPDATE invites SET status = 'revoked', updated_at = now()
        WHERE organization_id = ANY($1::uuid[]) AND status = 'pending'`,
      [organizationIds],
    );
  }

  /** Whether the address has a pending invite (whatever its case). */
  async hasPending(organizationId: OrganizationId, email: string): Promise<boolean> {
    const rows: unknown[] = await this.uow
      .manager()
      .query(
        `SELECT 1 FROM invites WHERE organization_id = $1 AND lower(email) = lower($2) AND status = 'pending' LIMIT 1`,
        [organizationId, email],
      );
    return rows.length > 0;
  }

  /** Invites in the `pending` state, each holding a seat. */
  async pendingCount(organizationId: OrganizationId): Promise<number> {
    const [row]: { n: number }[] = await this.uow
      .manager()
      .query(`SELECT count(*)::int AS n FROM invites WHERE organization_id = $1 AND status = 'pending'`, [
        organizationId,
      ]);
    return row.n;
  }

  /** Pending invites not yet past their expiry. */
  async unexpiredPendingCount(organizationId: OrganizationId): Promise<number> {
    const [row]: { n: number }[] = await this.uow
      .manager()
      .query(
        `SELECT count(*)::int AS n FROM invites WHERE organization_id = $1 AND status = 'pending' AND expires_at > now()`,
        [organizationId],
      );
    return row.n;
  }

  /** The newest unexpired pending invite of the address. */
  async newestPendingFor(organizationId: OrganizationId, email: string): Promise<{ id: string; role: Role } | null> {
    const [invite]: { id: string; role: Role }[] = await this.uow.manager().query(
      `SELECT id, role FROM invites
        WHERE organization_id = $1 AND lower(email) = lower($2) AND status = 'pending' AND expires_at > now()
        ORDER BY created_at DESC LIMIT 1`,
      [organizationId, email],
    );
    return invite ?? null;
  }
}
