import { Inject, Injectable, type OnModuleDestroy } from '@nestjs/common';
import { Cron, CronExpression, Interval } from '@nestjs/schedule';
import type { Logger } from 'pino';
import { createLogger } from '../common/logging/logger.js';
import { RAW_TIERS, tierDefinition } from '../common/tiers.js';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { Metrics } from '../metrics/metrics.js';
import { WebhookDeliveriesRepository, type ClaimedDelivery } from './webhook-deliveries.repository.js';
import { DEFAULT_RETRY_SCHEDULE, afterAttempt, isSuccessStatus, type RetrySchedule } from './webhook-retry-policy.js';
import { postWebhook, type WebhookResponse } from './webhook-sender.js';
import { webhookBody, webhookHeaders } from './webhook-signing.js';

export interface WebhookDeliverySettings {
  retry: RetrySchedule;
  /** Connect plus response, per attempt. */
  timeoutMs: number;
  /**
   * How long a claimed attempt is reserved for its sweeper. Longer than `timeoutMs`, so a live
   * sweeper always records before another may take the attempt over.
   */
  leaseMs: number;
  /** Deliveries claimed per query. */
  batchSize: number;
  /** Attempts this process runs at once. */
  maxInFlight: number;
}

export const DEFAULT_DELIVERY_SETTINGS: WebhookDeliverySettings = {
  retry: DEFAULT_RETRY_SCHEDULE,
  timeoutMs: 10_000,
  leaseMs: 60_000,
  batchSize: 50,
  maxInFlight: 100,
};

export type { ClaimedDelivery };

/** Advisory lock key of the pruning job (arbitrary; unique among the service's locks). */
const PRUNE_LOCK = 727_901;
const PRUNE_BATCH = 1_000;

/**
 * Delivers the outbox. Every second a sweep claims due deliveries with `FOR UPDATE SKIP LOCKED`
 * and a lease, sends them, and records each attempt; several processes sweep one database and
 * never send one attempt twice at once. A sweeper that dies between claim and record leaves the
 * delivery due again when the lease ends: retried, never lost. A lost attempt does not count
 * against the budget of 3, since nobody knows whether it was made.
 */
@Injectable()
export class WebhookDispatcher implements OnModuleDestroy {
  /** Process-wide, so tests can shorten delays and timeouts without new configuration. */
  static settings: WebhookDeliverySettings = { ...DEFAULT_DELIVERY_SETTINGS };

  private readonly logger: Logger;
  private readonly inFlight = new Set<Promise<void>>();
  private sweeping = false;
  private stopped = false;

  constructor(
    private readonly deliveries: WebhookDeliveriesRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly metrics: Metrics,
  ) {
    this.logger = createLogger(config).child({ component: 'webhook-dispatcher' });
    const backlog = metrics.gauge('attestly_webhook_backlog', 'Webhook deliveries waiting for an attempt (pending)');
    const oldest = metrics.gauge(
      'attestly_webhook_oldest_pending_age_seconds',
      'Age of the oldest pending webhook delivery (0 when none is pending)',
    );
    metrics.onScrape(async () => {
      const { pending, age } = await this.deliveries.backlog();
      backlog.set(pending);
      oldest.set(age);
    });
  }

  @Interval('webhook-sweep', 1_000)
  async scheduledSweep(): Promise<void> {
    if (this.sweeping || this.stopped) return;
    this.sweeping = true;
    try {
      await this.sweep({ wait: false });
    } catch (error) {
      this.logger.error({ err: error }, 'webhook sweep failed');
    } finally {
      this.sweeping = false;
    }
  }

  /**
   * Claims and sends every due delivery, up to `maxInFlight` at once, claiming more as slots
   * free up. With `wait` (the default) it returns once the attempts it started are recorded; the
   * scheduled sweep returns when nothing more is due, so a slow endpoint holds one slot, not the
   * next sweep. Returns the number of attempts started.
   */
  async sweep(options: { wait?: boolean } = {}): Promise<number> {
    const wait = options.wait ?? true;
    const settings = WebhookDispatcher.settings;
    const started: Promise<void>[] = [];
    while (!this.stopped) {
      const room = settings.maxInFlight - this.inFlight.size;
      if (room <= 0) {
        await Promise.race(this.inFlight);
        continue;
      }
      const limit = Math.min(room, settings.batchSize);
      const claimed = await this.claim(limit);
      for (const delivery of claimed) started.push(this.track(this.attempt(delivery)));
      if (claimed.length < limit) break;
    }
    if (wait) await Promise.all(started);
    return started.length;
  }

  /**
   * Reserves up to `limit` due deliveries of active endpoints for one lease. Exposed so a test
   * can play a sweeper that dies right after claiming.
   */
  claim(limit: number): Promise<ClaimedDelivery[]> {
    return this.deliveries.claim(limit, WebhookDispatcher.settings.leaseMs / 1000);
  }

  async onModuleDestroy(): Promise<void> {
    this.stopped = true;
    await Promise.allSettled([...this.inFlight]);
  }

  /** Hourly: events past the organization's analytics retention, once none of their deliveries is pending. */
  @Cron(CronExpression.EVERY_HOUR, { name: 'webhook-prune' })
  async scheduledPrune(): Promise<void> {
    try {
      await this.prune();
    } catch (error) {
      this.logger.error({ err: error }, 'webhook pruning failed');
    }
  }

  /** The number of events deleted (with their deliveries and attempts), or null when another instance prunes. */
  async prune(): Promise<number | null> {
    const tiers = [...RAW_TIERS];
    const days = tiers.map((tier) => tierDefinition(tier).limits.analyticsRetentionDays);
    return this.deliveries.pruneExpired(tiers, days, PRUNE_BATCH, PRUNE_LOCK);
  }

  private track(attempt: Promise<void>): Promise<void> {
    this.inFlight.add(attempt);
    void attempt.finally(() => this.inFlight.delete(attempt));
    return attempt;
  }

  /** Sends one claimed attempt and records it; never throws (an unrecorded attempt is retried after its lease). */
  private async attempt(delivery: ClaimedDelivery): Promise<void> {
    try {
      const settings = WebhookDispatcher.settings;
      const body = webhookBody(delivery.event_type, new Date(delivery.occurred_at), delivery.data);
      const response = await postWebhook({
        url: delivery.url,
        body,
        headers: webhookHeaders({
          secret: delivery.secret,
          body,
          event: delivery.event_type,
          deliveryId: delivery.id,
          sentAt: new Date(),
        }),
        timeoutMs: settings.timeoutMs,
        allowPrivateNetworks: this.config.webhookAllowPrivateNetworks,
      });
      await this.record(delivery, response);
    } catch (error) {
      this.logger.error({ err: error, deliveryId: delivery.id }, 'webhook attempt not recorded');
    }
  }

  /**
   * The attempt and what follows it, in one statement, only while this sweeper still holds the
   * claim: when the endpoint was deleted meanwhile, nothing is written and nothing is counted.
   */
  private async record(delivery: ClaimedDelivery, response: WebhookResponse): Promise<void> {
    const outcome = afterAttempt(
      delivery.attempt_count + 1,
      isSuccessStatus(response.statusCode),
      WebhookDispatcher.settings.retry,
    );
    const recorded = await this.deliveries.record(delivery.id, delivery.claim_token, {
      status: outcome.status,
      retryInSeconds: outcome.status === 'pending' ? outcome.retryInMs / 1000 : 0,
      statusCode: response.statusCode,
      error: response.error,
      responseBody: response.responseBody,
      latencyMs: response.latencyMs,
    });
    if (!recorded) return;
    this.metrics.webhookDelivery(
      outcome.status === 'succeeded' ? 'succeeded' : outcome.status === 'failed' ? 'failed' : 'retrying',
    );
    if (outcome.status === 'failed') {
      this.logger.info(
        { deliveryId: delivery.id, endpointId: delivery.endpoint_id },
        'webhook delivery permanently failed',
      );
    }
  }
}
