import { Injectable } from '@nestjs/common';
import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import { DatabasePool, type PoolStats } from '../database/database-pool.js';
import { RequestLatencyHistogram, requestCountsOf } from './request-latency.js';

/** What became of one webhook delivery attempt (`retrying`: it failed and another attempt is scheduled). */
export type WebhookDeliveryOutcome = 'succeeded' | 'retrying' | 'failed';

export type AttestationCall = 'validate' | 'refresh';

/** `rejected`: a 4xx answer (verification failed, limits, bad input); `error`: a 5xx. */
export type AttestationResult = 'success' | 'rejected' | 'error';

const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/**
 * The service's Prometheus series (listed in docs/operations.md). One registry per application
 * instance, so two instances in one process (tests) never collide. Other modules inject this
 * class and call its recording methods; each is a counter increment, cheap enough for hot paths.
 */
@Injectable()
export class Metrics {
  readonly registry = new Registry();

  /**
   * Read from the latency histogram's series at each scrape: every answered request is in both
   * (decision 0079). Registered first, so the exposition keeps its order.
   */
  private readonly requests = new Counter({
    name: 'attestly_http_requests_total',
    help: 'HTTP requests answered, by method, route template and status code',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [this.registry],
    collect: requestCountsOf(() => this.latency),
  });

  private readonly latency = new RequestLatencyHistogram({
    name: 'attestly_http_request_duration_seconds',
    help: 'Time from the request reaching the service to the last byte of the response',
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });

  private readonly attestations = new Counter({
    name: 'attestly_attestation_outcomes_total',
    help: 'Answers of POST /api/v1/attestation/validate and /refresh, by call, result and error code (ok on success)',
    labelNames: ['type', 'result', 'code'] as const,
    registers: [this.registry],
  });

  private readonly attestationFailures = new Counter({
    name: 'attestly_attestation_failures_total',
    help: 'Failed attestations and assertions recorded as device events, by app and error code',
    labelNames: ['app_id', 'code'] as const,
    registers: [this.registry],
  });

  private readonly webhookDeliveries = new Counter({
    name: 'attestly_webhook_deliveries_total',
    help: 'Webhook delivery attempts, by outcome (succeeded, retrying, failed)',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });

  private readonly ssoSignIns = new Counter({
    name: 'attestly_sso_sign_ins_total',
    help: 'Single sign-on attempts, by outcome (success, or the reason the sign-in was refused)',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });

  private readonly rateLimited = new Counter({
    name: 'attestly_rate_limit_rejections_total',
    help: 'Requests refused with 429, by route template',
    labelNames: ['route'] as const,
    registers: [this.registry],
  });

  /** Work run before every scrape (one query for several gauges, say); a failing hook leaves its gauges as they were. */
  private readonly scrapeHooks: Array<() => Promise<void>> = [];

  constructor(databasePool: DatabasePool) {
    collectDefaultMetrics({ register: this.registry });
    const pool = () => databasePool.stats();
    const poolGauge = (name: string, help: string, read: (stats: PoolStats) => number | undefined) =>
      new Gauge({
        name,
        help,
        registers: [this.registry],
        collect() {
          const stats = pool();
          const value = stats ? read(stats) : undefined;
          if (value !== undefined) this.set(value);
        },
      });
    poolGauge('attestly_db_pool_connections', 'Connections open in the database pool', (stats) => stats.totalCount);
    poolGauge('attestly_db_pool_idle_connections', 'Open connections not lent out', (stats) => stats.idleCount);
    poolGauge(
      'attestly_db_pool_waiting_requests',
      'Queries waiting for a free connection',
      (stats) => stats.waitingCount,
    );
    poolGauge('attestly_db_pool_max_connections', 'Size limit of the database pool', (stats) => stats.options?.max);
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  /** The text exposition of every series, collecting the scrape-time gauges. */
  async render(): Promise<string> {
    await Promise.allSettled(this.scrapeHooks.map((hook) => hook()));
    return this.registry.metrics();
  }

  /**
   * A gauge owned by the feature that knows its value: `read` runs at scrape time (a map's size,
   * say). Registering the same name twice returns the first gauge, so a module built twice in one
   * process (tests) does not collide.
   */
  gauge(name: string, help: string, read?: () => number): Gauge {
    const existing = this.registry.getSingleMetric(name);
    if (existing) return existing as Gauge;
    return new Gauge({
      name,
      help,
      registers: [this.registry],
      ...(read
        ? {
            collect(this: Gauge) {
              this.set(read());
            },
          }
        : {}),
    });
  }

  /** Runs `hook` before each scrape, for gauges filled from one query. */
  onScrape(hook: () => Promise<void>): void {
    this.scrapeHooks.push(hook);
  }

  /** One answered request, by method, route template and status, with its duration in seconds. */
  request(method: string, route: string, status: number, seconds: number): void {
    this.latency.record(method, route, status, seconds);
    if (status === 429) this.rateLimited.inc({ route });
  }

  attestationOutcome(type: AttestationCall, result: AttestationResult, code: string): void {
    this.attestations.inc({ type, result, code });
  }

  /** For SSO sign-in: one call per start refused or callback handled. */
  ssoSignIn(outcome: string): void {
    this.ssoSignIns.inc({ outcome });
  }

  /** One call per failed device event the attestation service records. */
  attestationFailure(appId: string, code: string): void {
    this.attestationFailures.inc({ app_id: appId, code });
  }

  /** For the webhook dispatcher: one call per recorded delivery attempt. */
  webhookDelivery(outcome: WebhookDeliveryOutcome): void {
    this.webhookDeliveries.inc({ outcome });
  }
}
