import { Inject, Injectable } from '@nestjs/common';
import { Cron, CronExpression } from '@nestjs/schedule';
import type { Logger } from 'pino';
import { createLogger } from '../common/logging/logger.js';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { ConsumedTokensRepository } from './consumed-tokens.repository.js';

/** Advisory lock key of this job (arbitrary; unique among the service's locks). */
const CONSUMED_TOKENS_LOCK = 727_104;
const BATCH = 1_000;

/**
 * Forgets consumed tokens once they have expired (an expired token is refused for that reason
 * anyway), in batches of 1,000, hourly, on one instance at a time.
 */
@Injectable()
export class ConsumedTokensJob {
  private readonly logger: Logger;

  constructor(
    private readonly consumed: ConsumedTokensRepository,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.logger = createLogger(config).child({ component: 'consumed-tokens-job' });
  }

  @Cron(CronExpression.EVERY_HOUR, { name: 'consumed-tokens' })
  async scheduled(): Promise<void> {
    try {
      await this.run();
    } catch (error) {
      this.logger.error({ err: error }, 'forgetting expired consumed tokens failed');
    }
  }

  /** Rows deleted, or null when another instance is running the job. */
  async run(now: Date = new Date()): Promise<number | null> {
    return this.consumed.deleteExpired(now, BATCH, CONSUMED_TOKENS_LOCK);
  }
}
