import { Inject, Injectable } from '@nestjs/common';
import { Cron, CronExpression } from '@nestjs/schedule';
import type { Logger } from 'pino';
import { createLogger } from '../common/logging/logger.js';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { ExpiredCredentialsRepository } from './expired-credentials.repository.js';
import { CLI_SESSION_RETENTION_DAYS } from './cli-login/cli-sessions.service.js';

/** Advisory lock key of this job (arbitrary; unique among the service's locks). */
const EXPIRED_CREDENTIALS_LOCK = 727_103;
const BATCH = 1_000;

/**
 * What the job deletes, and how long past expiry each row is kept. An e-mail link tried shortly
 * after it expired still answers "expired" (not "unknown") for a day; a CLI session polls as
 * `expired` for its whole retention (CLI_SESSION_RETENTION_DAYS), and is forgotten only then.
 */
const TABLES = [
  { table: 'sessions', graceDays: 0 },
  { table: 'cli_sessions', graceDays: CLI_SESSION_RETENTION_DAYS },
  { table: 'auth_tokens', graceDays: 1 },
] as const;

export type ExpiredCredentialCounts = Record<(typeof TABLES)[number]['table'], number>;

/**
 * Deletes expired dashboard sessions, CLI login sessions past their retention and e-mail tokens
 * (verification, password reset, e-mail change) in batches of 1,000, so one run never holds a long lock or a
 * large transaction. Every 30 minutes, on one instance at a time.
 */
@Injectable()
export class ExpiredCredentialsJob {
  private readonly logger: Logger;

  constructor(
    private readonly credentials: ExpiredCredentialsRepository,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.logger = createLogger(config).child({ component: 'expired-credentials-job' });
  }

  @Cron(CronExpression.EVERY_30_MINUTES, { name: 'expired-credentials' })
  async scheduled(): Promise<void> {
    try {
      await this.run();
    } catch (error) {
      this.logger.error({ err: error }, 'deleting expired credentials failed');
    }
  }

  /**
   * Rows deleted per table, or null when another instance is running the job. `now` is the
   * job's clock (tests move it forward instead of waiting a week).
   */
  async run(now: Date = new Date()): Promise<ExpiredCredentialCounts | null> {
    const result = await this.credentials.deleteExpired(
      EXPIRED_CREDENTIALS_LOCK,
      TABLES.map(({ table, graceDays }) => ({ table, before: new Date(now.getTime() - graceDays * 86_400_000) })),
      BATCH,
    );
    if (!result) return null;
    if (Object.values(result).some((count) => count > 0)) {
      this.logger.info(result, 'expired credentials deleted');
    }
    return result;
  }
}
