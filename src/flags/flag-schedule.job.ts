import { Inject, Injectable } from '@nestjs/common';
import { Interval } from '@nestjs/schedule';
import type { Logger } from 'pino';
import { createLogger } from '../common/logging/logger.js';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { ChangeRequestsService } from './change-requests.service.js';

/** How often due schedules are looked for: a change runs at most this late. */
export const SCHEDULE_SWEEP_MS = 5_000;
/** Schedules applied per run at most, so one run never holds the loop for long. */
const BATCH = 200;

/**
 * Applies due flag schedules, each through the gate of protected environments. Every instance runs it; each schedule is claimed with
 * `FOR UPDATE SKIP LOCKED` and marked applied in the transaction that applies it, so each applies
 * exactly once across instances. One run at a time per instance.
 */
@Injectable()
export class FlagScheduleJob {
  private readonly logger: Logger;
  private running: Promise<number> | null = null;

  constructor(
    private readonly requests: ChangeRequestsService,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.logger = createLogger(config).child({ component: 'flag-schedule-job' });
  }

  @Interval('flag-schedules', SCHEDULE_SWEEP_MS)
  async scheduled(): Promise<void> {
    try {
      await this.run();
    } catch (error) {
      this.logger.error({ err: error }, 'applying flag schedules failed');
    }
  }

  /** The number of schedules this run settled (applied or failed). `now` is for tests. */
  async run(now: Date = new Date()): Promise<number> {
    // Never two runs at once on one instance: a run waits for the one under way to end.
    while (this.running) await this.running.catch(() => undefined);
    const run = this.sweep(now).finally(() => (this.running = null));
    this.running = run;
    return run;
  }

  private async sweep(now: Date): Promise<number> {
    let settled = 0;
    while (settled < BATCH && (await this.requests.applyDueSchedule(now))) settled++;
    if (settled) this.logger.info({ settled }, 'flag schedules settled');
    return settled;
  }
}
