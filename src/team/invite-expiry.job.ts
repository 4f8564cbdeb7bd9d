import { Inject, Injectable } from '@nestjs/common';
import { Cron, CronExpression } from '@nestjs/schedule';
import type { Logger } from 'pino';
import { AdvisoryLocks } from '../database/advisory-lock.js';
import { createLogger } from '../common/logging/logger.js';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { InvitesRepository } from './invites.repository.js';

/** Advisory lock key of this job (arbitrary; unique among the service's locks). */
const INVITE_EXPIRY_LOCK = 727_101;

/** Marks pending invites past their 7 days as `expired`. Idempotent; one instance at a time. */
@Injectable()
export class InviteExpiryJob {
  private readonly logger: Logger;

  constructor(
    private readonly locks: AdvisoryLocks,
    private readonly invites: InvitesRepository,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.logger = createLogger(config).child({ component: 'invite-expiry-job' });
  }

  @Cron(CronExpression.EVERY_10_MINUTES, { name: 'invite-expiry' })
  async scheduled(): Promise<void> {
    try {
      await this.run();
    } catch (error) {
      this.logger.error({ err: error }, 'invite expiry failed');
    }
  }

  /** The number of invites expired, or null when another instance is running the job. */
  async run(): Promise<number | null> {
    const outcome = await this.locks.run(INVITE_EXPIRY_LOCK, () => this.invites.expireAllOverdue());
    if (!outcome.ran) return null;
    if (outcome.result) this.logger.info({ expired: outcome.result }, 'invites expired');
    return outcome.result;
  }
}
