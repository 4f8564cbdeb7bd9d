import { Injectable } from '@nestjs/common';
import { assertSpeaksForAccount, type OrgAuthContext } from '../common/access/auth-context.js';
import type { OrganizationId } from '../common/access/tenant-id.js';
import { conflict, forbidden, notFound } from '../common/errors/app-exception.js';
import { AuditService } from '../audit/audit.service.js';
import { UnitOfWork } from '../database/unit-of-work.js';
import { OrganizationsRepository, type OrganizationRecord } from './organizations.repository.js';
import { OrganizationLifecycleService } from './organization-lifecycle.service.js';
import { UsersService } from '../users/users.service.js';

/** Days between the request and the hard deletion (interface document: Limits). */
export const ACCOUNT_DELETION_GRACE_DAYS = 30;

/**
 * The first half of deleting an account: the account becomes `pending_deletion` (it can no longer
 * sign in) and its sessions end; AccountDeletionJob deletes it, with the organizations only it
 * belongs to, 30 days later.
 */
@Injectable()
export class AccountDeletionService {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly organizations: OrganizationsRepository,
    private readonly audit: AuditService,
    private readonly lifecycle: OrganizationLifecycleService,
    private readonly users: UsersService,
  ) {}

  /**
   * 409 while the active organization has other members (it would be left to them without its
   * Owner) and while the account is the last Owner of another organization that has members.
   * Subscriptions of the organizations that go with the account are cancelled at the provider
   * when it is configured, and cleared either way.
   */
  async requestDeletion(auth: OrgAuthContext): Promise<void> {
    if (auth.caller.kind !== 'session') throw forbidden('Only a signed-in user can delete their account');
    assertSpeaksForAccount(auth.caller);
    const userId = auth.caller.userId;
    const soleOrganizations = await this.uow.run(() => this.assertDeletable(auth.organizationId, userId));
    // The organizations that go with the account: their paid subscriptions end now.
    await this.lifecycle.beforeRemoval(soleOrganizations);
    await this.uow.run(async () => {
      // Checked again under the locks: someone may have joined while the provider was called.
      const organizations = await this.assertDeletable(auth.organizationId, userId);
      // The account stops signing in, and its sessions end, with this transaction.
      await this.users.markForDeletion(userId);
      // Nobody can join an organization that is going away (team revokes its pending invites).
      await this.lifecycle.scheduling(organizations.map((organization) => organization.id));
      for (const organization of organizations) {
        if (organization.providerSubscriptionId) {
          await this.organizations.clearSubscription(organization.id);
          await this.audit.record(auth, {
            organizationId: organization.id,
            action: 'billing.subscription_cancelled',
            resourceType: 'subscription',
            resourceId: organization.providerSubscriptionId,
            metadata: { reason: 'account_deletion', tier: { from: organization.serviceTier, to: 'free' } },
          });
        }
        await this.audit.record(auth, {
          organizationId: organization.id,
          action: 'account.deletion_requested',
          resourceType: 'user',
          resourceId: userId,
          metadata: { email: auth.caller.email, hardDeletionAfterDays: ACCOUNT_DELETION_GRACE_DAYS },
        });
      }
    });
  }

  /** Locks the user's organizations; answers those only the user belongs to. */
  private async assertDeletable(activeOrganizationId: OrganizationId, userId: string): Promise<OrganizationRecord[]> {
    await this.users.lock(userId);
    const rows = await this.organizations.lockAccountOrganizations(activeOrganizationId, userId);
    const active = rows.find((row) => row.id === activeOrganizationId);
    if (!active) throw notFound('Organization');
    if (active.others > 0) {
      throw conflict('The organization has other members', {
        hint: 'Remove the other members, or delete the organization, before deleting your account',
      });
    }
    const orphaned = rows.find((row) => row.role === 'owner' && row.others > 0 && row.otherOwners === 0);
    if (orphaned) {
      throw conflict('You are the only Owner of another organization with members', {
        hint: 'Make another member Owner there first',
      });
    }
    return this.organizations.findMany(
      rows.filter((row) => row.role !== null && row.others === 0).map((row) => row.id),
    );
  }
}
