import { Inject, Injectable } from '@nestjs/common';
import { Cron, CronExpression } from '@nestjs/schedule';
import type { Logger } from 'pino';
import { AdvisoryLocks } from '../database/advisory-lock.js';
import { deleteInBatches } from '../database/batches.js';
import { createLogger } from '../common/logging/logger.js';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { DebugTokensRepository } from './debug-tokens.repository.js';

/** Advisory lock key of this job (arbitrary; unique among the service's locks). */
export const DEBUG_TOKEN_RETENTION_LOCK = 727_106;
const BATCH = 1_000;
const DAY_MS = 86_400_000;

/**
 * How long a revoked or expired debug token is kept. It must outlast the deny set's hold on a
 * revoked token (31 days past the revocation, see DebugTokensRepository.revokedSince): a row
 * deleted sooner could not be reread, and device tokens minted from it would pass again.
 */
export const DEBUG_TOKEN_RETENTION_DAYS = 90;

/**
 * Deletes debug tokens 90 days after they were revoked or expired (whichever came first), in
 * batches of 1,000, daily, on one instance at a time. A deleted token's secret is unknown to the
 * exchange from then on.
 */
@Injectable()
export class DebugTokenRetentionJob {
  private readonly logger: Logger;

  constructor(
    private readonly locks: AdvisoryLocks,
    private readonly tokens: DebugTokensRepository,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.logger = createLogger(config).child({ component: 'debug-token-retention-job' });
  }

  @Cron(CronExpression.EVERY_DAY_AT_4AM, { name: 'debug-token-retention' })
  async scheduled(): Promise<void> {
    try {
      await this.run();
    } catch (error) {
      this.logger.error({ err: error }, 'deleting ended debug tokens failed');
    }
  }

  /** Tokens deleted, or null when another instance is running the job. `now` is the job's clock. */
  async run(now: Date = new Date()): Promise<number | null> {
    const before = new Date(now.getTime() - DEBUG_TOKEN_RETENTION_DAYS * DAY_MS);
    const outcome = await this.locks.run(DEBUG_TOKEN_RETENTION_LOCK, () =>
      deleteInBatches(BATCH, (size) => this.tokens.deleteEndedBefore(before, size)),
    );
    if (!outcome.ran) return null;
    if (outcome.result) this.logger.info({ deleted: outcome.result }, 'ended debug tokens deleted');
    return outcome.result;
  }
}
