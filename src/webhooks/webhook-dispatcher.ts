import { Inject, Injectable, type OnModuleDestroy } from '@nestjs/common';
import { Cron, CronExpression, Interval } from '@nestjs/schedule';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Logger } from 'pino';
import { DataSource } from 'typeorm';
import { createLogger } from '../common/logging/logger.js';
import { withAdvisoryLock } from '../common/scheduling/advisory-lock.js';
import { RAW_TIERS, tierDefinition } from '../common/tiers.js';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { queryRows } from '../database/sql.js';
import { Metrics } from '../metrics/metrics.js';
import { organizationJoin } from '../organizations/organizations.service.js';
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

/** A due delivery reserved by this process, with what it takes to send it. */
export interface ClaimedDelivery {
  id: string;
  claim_token: string;
  /** Attempts already recorded in the current budget. */
  attempt_count: number;
  organization_id: string;
  endpoint_id: string;
  url: string;
  secret: string;
  event_type: string;
  data: Record<string, unknown>;
  occurred_at: Date;
}

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
    @InjectDataSource() private readonly dataSource: DataSource,
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
      const [row] = await queryRows<{ pending: number; age: number }>(
        this.dataSource,
        `SELECT count(*)::int AS pending,
                COALESCE(EXTRACT(EPOCH FROM now() - min(created_at)), 0)::float8 AS age
           FROM webhook_deliveries WHERE status = 'pending'`,
      );
      backlog.set(row?.pending ?? 0);
      oldest.set(row?.age ?? 0);
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
    return queryRows<ClaimedDelivery>(
      this.dataSource,
      `WITH due AS (
         SELECT d.id FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id
          WHERE d.status = 'pending' AND d.next_attempt_at <= now()
            AND (d.locked_until IS NULL OR d.locked_until <= now()) AND e.is_active
          ORDER BY d.next_attempt_at
          LIMIT $1
            FOR UPDATE OF d SKIP LOCKED
       )
       UPDATE webhook_deliveries d
          SET locked_until = now() + make_interval(secs => $2::double precision),
              claim_token = gen_random_uuid(), updated_at = now()
         FROM due, webhook_endpoints e, webhook_events ev
        WHERE d.id = due.id AND e.id = d.endpoint_id AND ev.id = d.event_id
      RETURNING d.id, d.claim_token, d.attempt_count, d.organization_id, d.endpoint_id, e.url, e.secret,
                ev.event_type, ev.data, ev.occurred_at`,
      [limit, WebhookDispatcher.settings.leaseMs / 1000],
    );
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
    const outcome = await withAdvisoryLock(this.dataSource, PRUNE_LOCK, async (manager) => {
      let deleted = 0;
      for (;;) {
        const rows = await queryRows<{ id: string }>(
          manager,
          `DELETE FROM webhook_events WHERE id IN (
             SELECT ev.id FROM webhook_events ev
               ${organizationJoin('o', 'ev.organization_id')}
               JOIN unnest($1::text[], $2::int[]) AS retention(tier, days) ON retention.tier = o.tier
              WHERE ev.occurred_at < now() - make_interval(days => retention.days)
                AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = ev.id AND d.status = 'pending')
              LIMIT $3)
           RETURNING id`,
          [tiers, days, PRUNE_BATCH],
        );
        deleted += rows.length;
        if (rows.length < PRUNE_BATCH) return deleted;
      }
    });
    return outcome.ran ? outcome.result : null;
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
    const recorded = await queryRows<{ id: string }>(
      this.dataSource,
      `WITH recorded AS (
         UPDATE webhook_deliveries SET
           attempt_count = attempt_count + 1,
           status = $3,
           next_attempt_at = CASE WHEN $3 = 'pending'
                                  THEN now() + make_interval(secs => $4::double precision) ELSE next_attempt_at END,
           locked_until = NULL, claim_token = NULL,
           last_status_code = $5, last_error = $6,
           delivered_at = CASE WHEN $3 = 'succeeded' THEN now() ELSE delivered_at END,
           updated_at = now()
         WHERE id = $1 AND claim_token = $2
         RETURNING id, organization_id
       )
       INSERT INTO webhook_delivery_attempts
         (organization_id, delivery_id, attempt_number, status_code, response_body, error, latency_ms)
       SELECT organization_id, id, (SELECT count(*) + 1 FROM webhook_delivery_attempts WHERE delivery_id = $1),
              $5, $7, $6, $8
         FROM recorded
      RETURNING id`,
      [
        delivery.id,
        delivery.claim_token,
        outcome.status,
        outcome.status === 'pending' ? outcome.retryInMs / 1000 : 0,
        response.statusCode,
        response.error,
        response.responseBody,
        response.latencyMs,
      ],
    );
    if (recorded.length === 0) return;
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
