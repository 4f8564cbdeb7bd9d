import { randomUUID } from 'node:crypto';
import type { Role } from '../../src/common/access/access.decorator.js';
import { trustOrganizationId, type OrganizationId } from '../../src/common/access/tenant-id.js';
import { Invite, type InviteStatus } from '../../src/team/invite.entity.js';
import type { InviteRecord, InvitesRepository, NewInvite } from '../../src/team/invites.repository.js';

type Public<T> = { [K in keyof T]: T[K] };

/** invites in memory; `now` is the clock the expiry checks use. */
export class FakeInvitesRepository implements Public<InvitesRepository> {
  invites: Invite[] = [];
  /** A pending invite for `email` already holds the unique index's place. */
  private pendingFor(organizationId: string, email: string) {
    return this.invites.filter(
      (i) =>
        i.organizationId === organizationId && i.status === 'pending' && i.email.toLowerCase() === email.toLowerCase(),
    );
  }

  /** An invite in any state, as if created earlier. */
  seed(organizationId: OrganizationId, input: Partial<Invite> & { email: string }): Invite {
    const invite = Object.assign(new Invite(), {
      id: randomUUID(),
      organizationId,
      role: 'member',
      tokenHash: randomUUID(),
      status: 'pending',
      invitedBy: null,
      acceptedBy: null,
      acceptedAt: null,
      expiresAt: new Date(Date.now() + 86_400_000),
      createdAt: new Date(),
      updatedAt: new Date(),
      ...input,
    });
    this.invites.push(invite);
    return invite;
  }

  listPending(organizationId: OrganizationId): Promise<Invite[]> {
    return Promise.resolve(
      this.invites.filter(
        (i) => i.organizationId === organizationId && i.status === 'pending' && i.expiresAt.getTime() > Date.now(),
      ),
    );
  }

  insert(organizationId: OrganizationId, invite: NewInvite): Promise<Invite> {
    if (this.pendingFor(organizationId, invite.email).length) {
      return Promise.reject(
        Object.assign(new Error('duplicate key value violates unique constraint'), { code: '23505' }),
      );
    }
    return Promise.resolve(this.seed(organizationId, { ...invite }));
  }

  lock(organizationId: OrganizationId, inviteId: string): Promise<Invite | null> {
    return Promise.resolve(this.invites.find((i) => i.id === inviteId && i.organizationId === organizationId) ?? null);
  }

  lockByTokenHash(tokenHash: string): Promise<InviteRecord | null> {
    const invite = this.invites.find((i) => i.tokenHash === tokenHash);
    return Promise.resolve(
      invite ? Object.assign(invite, { organizationId: trustOrganizationId(invite.organizationId) }) : null,
    );
  }

  setStatus(
    organizationId: OrganizationId,
    inviteId: string,
    status: Exclude<InviteStatus, 'accepted'>,
  ): Promise<void> {
    const invite = this.invites.find((i) => i.id === inviteId && i.organizationId === organizationId);
    if (invite) invite.status = status;
    return Promise.resolve();
  }

  markAccepted(organizationId: string, inviteId: string, userId: string): Promise<void> {
    const invite = this.invites.find((i) => i.id === inviteId && i.organizationId === organizationId);
    if (invite) Object.assign(invite, { status: 'accepted', acceptedBy: userId, acceptedAt: new Date() });
    return Promise.resolve();
  }

  expireOverdue(organizationId: OrganizationId): Promise<void> {
    for (const invite of this.invites) {
      if (
        invite.organizationId === organizationId &&
        invite.status === 'pending' &&
        invite.expiresAt.getTime() <= Date.now()
      )
        invite.status = 'expired';
    }
    return Promise.resolve();
  }

  expireAllOverdue(): Promise<number> {
    const overdue = this.invites.filter((i) => i.status === 'pending' && i.expiresAt.getTime() <= Date.now());
    for (const invite of overdue) invite.status = 'expired';
    return Promise.resolve(overdue.length);
  }

  revokePending(organizationIds: readonly OrganizationId[]): Promise<void> {
    for (const invite of this.invites) {
      if (organizationIds.includes(invite.organizationId as OrganizationId) && invite.status === 'pending')
        invite.status = 'revoked';
    }
    return Promise.resolve();
  }

  hasPending(organizationId: OrganizationId, email: string): Promise<boolean> {
    return Promise.resolve(this.pendingFor(organizationId, email).length > 0);
  }

  pendingCount(organizationId: OrganizationId): Promise<number> {
    return Promise.resolve(
      this.invites.filter((i) => i.organizationId === organizationId && i.status === 'pending').length,
    );
  }

  unexpiredPendingCount(organizationId: string): Promise<number> {
    return Promise.resolve(
      this.invites.filter(
        (i) => i.organizationId === organizationId && i.status === 'pending' && i.expiresAt.getTime() > Date.now(),
      ).length,
    );
  }

  newestPendingFor(organizationId: string, email: string): Promise<{ id: string; role: Role } | null> {
    const invite = this.pendingFor(organizationId, email)
      .filter((i) => i.expiresAt.getTime() > Date.now())
      .at(-1);
    return Promise.resolve(invite ? { id: invite.id, role: invite.role } : null);
  }
}
