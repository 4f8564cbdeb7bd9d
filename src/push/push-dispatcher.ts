import { createPrivateKey, type KeyObject } from 'node:crypto';
import { Inject, Injectable, type OnModuleDestroy } from '@nestjs/common';
import { Cron, CronExpression, Interval } from '@nestjs/schedule';
import type { Logger } from 'pino';
import { AppsRepository } from '../apps/apps.repository.js';
import type { AppId } from '../common/access/tenant-id.js';
import { createLogger } from '../common/logging/logger.js';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import {
  APNS_PRODUCTION_ORIGIN,
  APNS_SANDBOX_ORIGIN,
  ApnsClient,
  PROVIDER_TOKEN_LIFETIME_MS,
  providerToken,
  type ApnsAnswer,
} from './apns-client.js';
import { apnsOutcome } from './apns-payload.js';
import { PushCredentialsRepository } from './push-credentials.repository.js';
import { PushDeliveriesRepository, type ClaimedPush } from './push-deliveries.repository.js';
import { PushKey } from './push-key.js';
import { PushTokensRepository } from './push-tokens.repository.js';

/** Attempts per push; 429 and 5xx answers and connection failures are retried until then. */
export const MAX_PUSH_ATTEMPTS = 5;
/** Delay before attempt n+1 (after n attempts), in seconds. */
const RETRY_DELAYS_S = [10, 60, 300, 1_800];
const LEASE_S = 60;
const BATCH = 50;
/** Finished pushes are kept this long for support questions, then deleted. */
const KEEP_FINISHED_DAYS = 30;
/** Advisory lock key of the pruning job (arbitrary; unique among the service's locks). */
const PRUNE_LOCK = 727_902;

interface Credentials {
  origin: string;
  keyId: string;
  teamId: string;
  privateKey: KeyObject;
  version: string;
  token: { value: string; issuedAt: number } | null;
}

/**
 * Delivers the push outbox to APNs. Every second a sweep claims due pushes with `FOR UPDATE
 * SKIP LOCKED` and a lease (so instances never send one push twice at once, and a push whose
 * sweeper died is taken over when the lease ends), sends them with the app's provider token, and
 * records APNs' answer: a dead device token (410, BadDeviceToken) is removed; 429 and 5xx are
 * retried with growing delays; a refused provider token is renewed and the push retried.
 */
@Injectable()
export class PushDispatcher implements OnModuleDestroy {
  private readonly logger: Logger;
  private readonly client = new ApnsClient();
  private readonly credentials = new Map<string, Credentials>();
  private sweeping = false;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly pushKey: PushKey,
    private readonly deliveries: PushDeliveriesRepository,
    private readonly tokens: PushTokensRepository,
    private readonly storedCredentials: PushCredentialsRepository,
    private readonly apps: AppsRepository,
  ) {
    this.logger = createLogger(config).child({ component: 'push-dispatcher' });
  }

  onModuleDestroy(): void {
    this.client.close();
  }

  @Interval('push-sweep', 1_000)
  async scheduledSweep(): Promise<void> {
    if (this.sweeping) return;
    this.sweeping = true;
    try {
      await this.sweep();
    } catch (error) {
      this.logger.error({ err: error }, 'push sweep failed');
    } finally {
      this.sweeping = false;
    }
  }

  @Cron(CronExpression.EVERY_HOUR, { name: 'push-prune' })
  async prune(): Promise<void> {
    try {
      await this.deliveries.pruneFinished(KEEP_FINISHED_DAYS, PRUNE_LOCK);
    } catch (error) {
      this.logger.error({ err: error }, 'pruning pushes failed');
    }
  }

  /** Sends every due push; returns how many were attempted. */
  async sweep(): Promise<number> {
    let attempted = 0;
    for (;;) {
      const claimed = await this.deliveries.claimDue(BATCH, LEASE_S);
      const topics = await this.apps.bundleIds([...new Set(claimed.map((push) => push.app_id))]);
      await Promise.all(claimed.map((push) => this.deliver(push, topics.get(push.app_id))));
      attempted += claimed.length;
      if (claimed.length < BATCH) return attempted;
    }
  }

  private async deliver(push: ClaimedPush, topic: string | null | undefined): Promise<void> {
    if (topic === undefined) {
      await this.record(push, 'failed', null, 'The app does not exist any more');
      return;
    }
    if (topic === null) {
      await this.record(push, 'failed', null, 'The app has no Bundle ID (Android-only), the APNs topic');
      return;
    }
    const credentials = await this.credentialsFor(push.app_id);
    if (!credentials) {
      await this.record(push, 'failed', null, 'The app has no APNs credentials any more');
      return;
    }
    let answer: ApnsAnswer;
    try {
      answer = await this.client.send({
        origin: credentials.origin,
        deviceToken: push.device_token,
        providerToken: await this.providerToken(credentials),
        topic,
        payload: JSON.stringify(push.payload),
      });
    } catch (error) {
      await this.retryOrFail(push, null, error instanceof Error ? error.message : 'connection failed');
      return;
    }
    const outcome = apnsOutcome(answer.status, answer.reason);
    switch (outcome) {
      case 'sent':
        await this.record(push, 'sent', answer.status, null);
        return;
      case 'unregistered':
        await this.record(push, 'unregistered', answer.status, answer.reason);
        await this.tokens.removeDead(push.app_id, push.device_token);
        return;
      case 'renew_token':
        credentials.token = null;
        await this.retryOrFail(push, answer.status, answer.reason);
        return;
      case 'retry':
        await this.retryOrFail(push, answer.status, answer.reason);
        return;
      case 'failed':
        await this.record(push, 'failed', answer.status, answer.reason);
        return;
    }
  }

  private async retryOrFail(push: ClaimedPush, status: number | null, error: string | null): Promise<void> {
    if (push.attempts >= MAX_PUSH_ATTEMPTS) {
      await this.record(push, 'failed', status, error);
      return;
    }
    const delay = RETRY_DELAYS_S[Math.min(push.attempts, RETRY_DELAYS_S.length) - 1];
    await this.deliveries.retryLater(push.id, delay, status, error);
  }

  private async record(push: ClaimedPush, status: string, httpStatus: number | null, error: string | null) {
    await this.deliveries.finish(push.id, status, httpStatus, error);
  }

  /** The app's credentials, reread when they change (`updated_at`); the key opened once per change. */
  private async credentialsFor(appId: AppId): Promise<Credentials | null> {
    const row = await this.storedCredentials.sealedFor(appId);
    if (!row) {
      this.credentials.delete(appId);
      return null;
    }
    const cached = this.credentials.get(appId);
    if (cached && cached.version === row.version) return cached;
    const pem = (await this.pushKey.box()).open(row.private_key_encrypted, appId);
    if (pem === null) throw new Error('The stored APNs key does not open with the push encryption key');
    const fresh: Credentials = {
      origin: this.config.apnsUrl ?? (row.environment === 'production' ? APNS_PRODUCTION_ORIGIN : APNS_SANDBOX_ORIGIN),
      keyId: row.key_id,
      teamId: row.team_id,
      privateKey: createPrivateKey(pem),
      version: row.version,
      token: null,
    };
    this.credentials.set(appId, fresh);
    return fresh;
  }

  /** One provider token per app for 50 minutes, as APNs asks (renewed at most every 20, at least every 60). */
  private async providerToken(credentials: Credentials): Promise<string> {
    const now = Date.now();
    if (!credentials.token || now - credentials.token.issuedAt > PROVIDER_TOKEN_LIFETIME_MS) {
      credentials.token = {
        value: await providerToken(credentials.privateKey, credentials.keyId, credentials.teamId),
        issuedAt: now,
      };
    }
    return credentials.token.value;
  }
}
