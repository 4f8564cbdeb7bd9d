import { Inject, Injectable } from '@nestjs/common';
import { Cron, CronExpression } from '@nestjs/schedule';
import type { Logger } from 'pino';
import { AdvisoryLocks } from '../database/advisory-lock.js';
import { createLogger } from '../common/logging/logger.js';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { UnitOfWork } from '../database/unit-of-work.js';
import { ACCOUNT_DELETION_GRACE_DAYS } from './account-deletion.service.js';
import { OrganizationLifecycleService } from './organization-lifecycle.service.js';
import { OrganizationsRepository } from './organizations.repository.js';
import { UsersService } from '../users/users.service.js';

/** Advisory lock key of this job (arbitrary; unique among the service's locks). */
const ACCOUNT_DELETION_LOCK = 727_102;
/** Accounts deleted per transaction, so one run never holds locks for long. */
const BATCH = 50;

/**
 * Hard-deletes accounts 30 days after their deletion was requested, with every organization the
 * account is by then the only member of (their data cascades). Idempotent; one instance at a time.
 */
@Injectable()
export class AccountDeletionJob {
  private readonly logger: Logger;

  constructor(
    private readonly uow: UnitOfWork,
    private readonly locks: AdvisoryLocks,
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly organizations: OrganizationsRepository,
    private readonly lifecycle: OrganizationLifecycleService,
    private readonly users: UsersService,
  ) {
    this.logger = createLogger(config).child({ component: 'account-deletion-job' });
  }

  @Cron(CronExpression.EVERY_HOUR, { name: 'account-hard-deletion' })
  async scheduled(): Promise<void> {
    try {
      await this.run();
    } catch (error) {
      this.logger.error({ err: error }, 'account hard deletion failed');
    }
  }

  /** The number of accounts deleted, or null when another instance is running the job. */
  async run(): Promise<number | null> {
    const outcome = await this.locks.run(ACCOUNT_DELETION_LOCK, async () => {
      let deleted = 0;
      for (;;) {
        const batch = await this.uow.run(async () => {
          const ids = await this.users.dueForDeletion(ACCOUNT_DELETION_GRACE_DAYS, BATCH);
          if (!ids.length) return 0;
          const organizationIds = await this.organizations.lockOrganizationsOnlyOf(ids);
          // Their device tokens and keys stop working on every instance once this commits.
          await this.lifecycle.removing(organizationIds);
          await this.organizations.delete(organizationIds);
          await this.users.delete(ids);
          return ids.length;
        });
        deleted += batch;
        if (batch < BATCH) return deleted;
      }
    });
    if (!outcome.ran) return null;
    if (outcome.result) this.logger.info({ deleted: outcome.result }, 'accounts hard-deleted');
    return outcome.result;
  }
}
