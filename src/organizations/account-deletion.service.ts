import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';
import { assertSpeaksForAccount, type OrgAuthContext } from '../common/access/auth-context.js';
import { conflict, forbidden, notFound } from '../common/errors/app-exception.js';
import { AuditService } from '../audit/audit.service.js';
import { Organization } from './organization.entity.js';
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
    @InjectDataSource() private readonly dataSource: DataSource,
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
    const soleOrganizations = await this.dataSource.transaction((manager) =>
      this.assertDeletable(manager, auth.organizationId, userId),
    );
    // The organizations that go with the account: their paid subscriptions end now.
    await this.lifecycle.beforeRemoval(soleOrganizations);
    await this.dataSource.transaction(async (manager) => {
      // Checked again under the locks: someone may have joined while the provider was called.
      const organizations = await this.assertDeletable(manager, auth.organizationId, userId);
      // The account stops signing in, and its sessions end, with this transaction.
      await this.users.markForDeletion(manager, userId);
      // Nobody can join an organization that is going away (team revokes its pending invites).
      await this.lifecycle.whileScheduling(
        manager,
        organizations.map((organization) => organization.id),
      );
      for (const organization of organizations) {
        if (organization.providerSubscriptionId) {
          await manager.query(
            `UPDATE organizations
                SET service_tier = 'free', provider_subscription_id = NULL, current_period_end = NULL, billing_anchor_day = NULL, updated_at = now()
              WHERE id = $1`,
            [organization.id],
          );
          await this.audit.record(
            auth,
            {
              organizationId: organization.id,
              action: 'billing.subscription_cancelled',
              resourceType: 'subscription',
              resourceId: organization.providerSubscriptionId,
              metadata: { reason: 'account_deletion', tier: { from: organization.serviceTier, to: 'free' } },
            },
            manager,
          );
        }
        await this.audit.record(
          auth,
          {
            organizationId: organization.id,
            action: 'account.deletion_requested',
            resourceType: 'user',
            resourceId: userId,
            metadata: { email: auth.caller.email, hardDeletionAfterDays: ACCOUNT_DELETION_GRACE_DAYS },
          },
          manager,
        );
      }
    });
  }

  /** Locks the user's organizations; answers those only the user belongs to. */
  private async assertDeletable(manager: EntityManager, activeOrganizationId: string, userId: string) {
    await this.users.lock(manager, userId);
    const rows: { id: string; others: number; other_owners: number; role: string | null }[] = await manager.query(
      `SELECT o.id,
              (SELECT count(*)::int FROM memberships x WHERE x.organization_id = o.id AND x.user_id <> $2) AS others,
              (SELECT count(*)::int FROM memberships x
                WHERE x.organization_id = o.id AND x.user_id <> $2 AND x.role = 'owner') AS other_owners,
              m.role
         FROM organizations o
         LEFT JOIN memberships m ON m.organization_id = o.id AND m.user_id = $2
        WHERE o.id = $1 OR m.user_id IS NOT NULL
        ORDER BY o.id
          FOR UPDATE OF o`,
      [activeOrganizationId, userId],
    );
    const active = rows.find((row) => row.id === activeOrganizationId);
    if (!active) throw notFound('Organization');
    if (active.others > 0) {
      throw conflict('The organization has other members', {
        hint: 'Remove the other members, or delete the organization, before deleting your account',
      });
    }
    const orphaned = rows.find((row) => row.role === 'owner' && row.others > 0 && row.other_owners === 0);
    if (orphaned) {
      throw conflict('You are the only Owner of another organization with members', {
        hint: 'Make another member Owner there first',
      });
    }
    const soleIds = rows.filter((row) => row.role !== null && row.others === 0).map((row) => row.id);
    if (!soleIds.length) return [];
    return manager
      .getRepository(Organization)
      .createQueryBuilder('organizations')
      .where('organizations.id IN (:...ids)', { ids: soleIds })
      .getMany();
  }
}
