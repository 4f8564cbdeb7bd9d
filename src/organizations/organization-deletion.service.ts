import { Inject, Injectable } from '@nestjs/common';
import type { Logger } from 'pino';
import { actorOf, type OrgAuthContext } from '../common/access/auth-context.js';
import { notFound } from '../common/errors/app-exception.js';
import { createLogger } from '../common/logging/logger.js';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { UnitOfWork } from '../database/unit-of-work.js';
import { OrganizationLifecycleService } from './organization-lifecycle.service.js';
import { OrganizationsRepository } from './organizations.repository.js';
import { UsersService } from '../users/users.service.js';

/** Deletes a whole organization: its data, its subscription, and the accounts that only it held. */
@Injectable()
export class OrganizationDeletionService {
  private readonly logger: Logger;

  constructor(
    private readonly uow: UnitOfWork,
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly organizations: OrganizationsRepository,
    private readonly lifecycle: OrganizationLifecycleService,
    private readonly users: UsersService,
  ) {
    this.logger = createLogger(config).child({ component: 'organization-deletion' });
  }

  /**
   * One transaction: every tenant table cascades from `organizations`, so deleting the row removes
   * all of the organization's data. Members who belong to no other organization are deactivated
   * and signed out everywhere; members of other organizations keep their accounts and sessions
   * (a session in the deleted organization loses its organization context). A paid subscription is
   * cancelled first, so a failure at the provider leaves the organization as it was.
   */
  async delete(auth: OrgAuthContext): Promise<void> {
    const organization = await this.organizations.find(auth.organizationId);
    if (!organization) throw notFound('Organization');
    await this.lifecycle.beforeRemoval([organization]);
    const deactivated = await this.uow.run(async () => {
      const locked = await this.organizations.find(auth.organizationId, { lock: true });
      if (!locked) throw notFound('Organization');
      // Accounts that only this organization held are disabled and signed out everywhere.
      const userIds = await this.users.deactivate(await this.organizations.soleMembers(locked.id));
      // Every instance stops honouring the organization's device tokens and keys once this commits.
      await this.lifecycle.removing([locked.id]);
      await this.organizations.delete([locked.id]);
      // Keys and apps this instance remembers went with the organization.
      await this.uow.afterCommit(() => this.lifecycle.afterRemoval([locked.id]));
      return userIds.length;
    });
    // The audit log went with the organization; the service log keeps the trace.
    this.logger.info(
      { organizationId: organization.id, slug: organization.slug, actor: actorOf(auth), deactivated },
      'org.deleted',
    );
  }
}
