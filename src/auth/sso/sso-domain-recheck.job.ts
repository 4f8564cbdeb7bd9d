import { Inject, Injectable } from '@nestjs/common';
import { Cron, CronExpression } from '@nestjs/schedule';
import type { Logger } from 'pino';
import { createLogger } from '../../common/logging/logger.js';
import type { AppConfig } from '../../config/app-config.js';
import { APP_CONFIG } from '../../config/config.module.js';
import { SsoDomainRecheckLock } from './sso-domain-recheck.repository.js';
import { SsoDomainsService } from './sso-domains.service.js';

/**
 * Checks each verified SSO domain's TXT record again once a day (hourly runs, each taking the
 * domains due), so a domain whose record was removed stops routing sign-ins. One instance at a
 * time.
 */
@Injectable()
export class SsoDomainRecheckJob {
  private readonly logger: Logger;

  constructor(
    private readonly lock: SsoDomainRecheckLock,
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly domains: SsoDomainsService,
  ) {
    this.logger = createLogger(config).child({ component: 'sso-domain-recheck-job' });
  }

  @Cron(CronExpression.EVERY_HOUR, { name: 'sso-domain-recheck' })
  async scheduled(): Promise<void> {
    try {
      await this.run();
    } catch (error) {
      this.logger.error({ err: error }, 're-checking SSO domains failed');
    }
  }

  /** What the run checked and took away, or null when another instance is running it. */
  async run(now: Date = new Date()): Promise<{ checked: number; lost: number } | null> {
    const outcome = await this.lock.whileHeld(() => this.domains.recheckDue(now));
    if (!outcome) return null;
    if (outcome.result.lost > 0) this.logger.info(outcome.result, 'SSO domains lost their verification');
    return outcome.result;
  }
}
