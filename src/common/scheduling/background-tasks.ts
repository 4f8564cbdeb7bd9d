import { Inject, Injectable, type BeforeApplicationShutdown } from '@nestjs/common';
import type { Logger } from 'pino';
import type { AppConfig } from '../../config/app-config.js';
import { APP_CONFIG } from '../../config/config.module.js';
import { createLogger } from '../logging/logger.js';

/**
 * Work that runs after the answer is sent: what must not make the answer's timing depend on an
 * account existing (sign-up, password reset). A failure is logged, never answered; shutdown waits
 * for what is running (before the database pool closes), so an accepted request is not dropped.
 */
@Injectable()
export class BackgroundTasks implements BeforeApplicationShutdown {
  private readonly running = new Set<Promise<void>>();
  private readonly logger: Logger;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.logger = createLogger(config).child({ component: 'background-tasks' });
  }

  run(name: string, task: () => Promise<void>): void {
    const running: Promise<void> = Promise.resolve()
      .then(task)
      .catch((error: unknown) => this.logger.error({ err: error, task: name }, 'background task failed'))
      .finally(() => this.running.delete(running));
    this.running.add(running);
  }

  /** Resolves once every task started so far has ended (tests; shutdown). */
  async idle(): Promise<void> {
    while (this.running.size) await Promise.allSettled([...this.running]);
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.idle();
  }
}
