import { EventEmitter } from 'node:events';
import { Inject, Injectable, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { debugTokenIdOf } from './debug-subject.js';
import { DenySetSourcesService } from './deny-set-sources.service.js';
import { serviceUnavailable } from '../common/errors/app-exception.js';
import { createLogger } from '../common/logging/logger.js';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { PgListener } from '../database/pg-listener.js';

/** How stale another instance's block may be on this one if its notification was lost. */
export const BLOCKED_DEVICES_REFRESH_MS = 5_000;

/** The longest a device token lives (the largest `overrideExpirationTime`, 30 days). */
export const MAX_TOKEN_LIFETIME_MS = 2_592_000 * 1000;

export const TOKEN_REVOCATIONS_CHANNEL = 'token_revocations';

/**
 * What makes existing device tokens stop (or start again) working, announced to every instance
 * with `pg_notify` in the transaction of the change: a device blocked or unblocked in some apps,
 * an app deactivated, reactivated or deleted (deleting an organization deletes each of its apps).
 */
export type Revocation =
  | { kind: 'device'; appIds: string[]; keyId: string; blocked: boolean }
  | { kind: 'app'; appId: string; state: 'active' | 'inactive' | 'deleted' }
  | { kind: 'debugToken'; appId: string; tokenId: string };

/** Longer than any device token lives (`overrideExpirationTime` is at most 30 days): 31 days. */
const REVOKED_DEBUG_TOKENS_KEPT_MS = MAX_TOKEN_LIFETIME_MS + 86_400_000;

interface Queryable {
  query(sql: string, parameters?: unknown[]): Promise<unknown>;
}

/** Announces a revocation; call it inside the transaction of the change, so it fires on commit. */
export async function announceRevocation(manager: Queryable, revocation: Revocation): Promise<void> {
  await manager.query(`SELECT pg_notify($1, $2)`, [TOKEN_REVOCATIONS_CHANNEL, JSON.stringify(revocation)]);
}

/** Apps deleted with their organization, announced in one statement (one message per app). */
export async function announceAppsDeleted(manager: Queryable, appIds: readonly string[]): Promise<void> {
  if (!appIds.length) return;
  await manager.query(
    `SELECT pg_notify($1, json_build_object('kind', 'app', 'appId', app.id, 'state', 'deleted')::text)
       FROM unnest($2::uuid[]) AS app(id)`,
    [TOKEN_REVOCATIONS_CHANNEL, appIds],
  );
}

export interface TokenRefusal {
  message: string;
  hint: string;
}

/**
 * The deny set of device tokens. Device tokens live up to 30 days, so blocking a device,
 * deactivating or deleting its app, or deleting its organization must reach the tokens already
 * out: the SDK routes that take a token (GET /flags, the stream, evaluate) ask here on every
 * request (set lookups, no query). Changes arrive through PostgreSQL LISTEN/NOTIFY on every
 * instance, the changing one included, within milliseconds of the commit; each one is passed on to
 * `onRevocation` listeners (the apps feature drops the app from its tenant cache, open event
 * streams close). A deleted app stays denied for the longest token lifetime; blocks and deactivations
 * last as long as they do in the database, which is reread every BLOCKED_DEVICES_REFRESH_MS in
 * the background in case a notification was lost.
 *
 * Revoked debug tokens are in the set too, for as long as a device token minted from one could
 * live: a token whose `sub` is `debug:<tokenId>[:…]` is refused once its debug token is revoked.
 *
 * Blocked devices are read here; inactive apps and revoked debug tokens are read by their owners,
 * apps and attestation, through DenySetSourcesService (both import devices).
 */
@Injectable()
export class BlockedDevices implements OnModuleInit, OnModuleDestroy {
  private blocked = new Set<string>();
  private inactiveApps = new Set<string>();
  /** Deleted app → when its last token has expired (ms). */
  private readonly deletedApps = new Map<string, number>();
  /** When the last read ended (failed or not): the next one is due BLOCKED_DEVICES_REFRESH_MS later. */
  private loadedAt = 0;
  /** Whether a read has ever completed: until then the sets are not the deny set. */
  private loaded = false;
  private loading: Promise<void> | null = null;
  /** Revocations that arrived while a reload was reading: applied again on top of its result. */
  private arrivedDuringLoad: Revocation[] | null = null;
  private readonly revocations = new EventEmitter();
  private readonly listener: PgListener;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly sources: DenySetSourcesService,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.revocations.setMaxListeners(0);
    this.listener = new PgListener({
      url: (dataSource.options as { url?: string }).url,
      channel: TOKEN_REVOCATIONS_CHANNEL,
      logger: createLogger(config).child({ component: 'token-revocations' }),
      onMessage: (payload) => this.receive(payload),
      onReconnect: () => {
        this.revocations.emit('resync');
        void this.reload();
      },
    });
  }

  async onModuleInit(): Promise<void> {
    await this.listener.start();
  }

  async onModuleDestroy(): Promise<void> {
    await this.listener.close();
  }

  /** Why a verified token of `keyId` for `appId` is refused now, or null when it is not. */
  async refusalFor(appId: string, keyId: string): Promise<TokenRefusal | null> {
    if (!this.loaded) {
      await this.reload();
      // Never read whole: the database has been out of reach since this instance started, or a
      // source is not provided yet (sources are provided as modules start, before any request).
      // Refused, rather than let the token of a blocked device or a deactivated app through.
      if (!this.loaded) {
        const missing = this.sources.missing();
        if (missing.length) throw new Error(`The deny set lacks ${missing.join(', ')}`);
        throw serviceUnavailable('Device tokens cannot be checked right now', { hint: 'Retry in a few seconds' });
      }
    } else if (Date.now() - this.loadedAt > BLOCKED_DEVICES_REFRESH_MS) void this.reload();
    const deletedUntil = this.deletedApps.get(appId);
    if (deletedUntil !== undefined) {
      if (deletedUntil > Date.now()) {
        return { message: 'The attestation token belongs to a deleted app', hint: 'The app is no longer registered' };
      }
      this.deletedApps.delete(appId);
    }
    if (this.inactiveApps.has(appId)) {
      return { message: 'The attestation token belongs to a deactivated app', hint: 'Activate it in the dashboard' };
    }
    const debugTokenId = debugTokenIdOf(keyId);
    if (debugTokenId) {
      if (!this.blocked.has(debugEntry(appId, debugTokenId))) return null;
      return {
        message: 'The attestation token was minted from a revoked debug token',
        hint: 'Create a new debug token for the build',
      };
    }
    if (this.blocked.has(entry(appId, keyId))) {
      return {
        message: 'The attestation token belongs to a blocked device',
        hint: 'An Admin of the app unblocks devices in the dashboard',
      };
    }
    return null;
  }

  /**
   * The same question read from the database, exact on every instance (backend verification,
   * where one query is affordable): why the token's subject is refused, or null.
   */
  async refusalNow(appId: string, keyId: string): Promise<'device_blocked' | 'debug_token_revoked' | null> {
    const debugTokenId = debugTokenIdOf(keyId);
    if (debugTokenId) {
      return (await this.sources.debugTokenRevoked(appId, debugTokenId)) ? 'debug_token_revoked' : null;
    }
    const rows: unknown[] = await this.dataSource.query(
      `SELECT 1 FROM devices WHERE app_id = $1 AND key_id = $2 AND is_blocked`,
      [appId, keyId],
    );
    return rows.length ? 'device_blocked' : null;
  }

  /** A debug token revoked on this instance (revocation is permanent), before its notification is back. */
  noteRevokedDebugToken(appId: string, tokenId: string): void {
    this.apply({ kind: 'debugToken', appId, tokenId });
  }

  /** What a committed block or unblock on this instance changed, before its notification is back. */
  note(appId: string, keyId: string, blocked: boolean): void {
    this.apply({ kind: 'device', appIds: [appId], keyId, blocked });
  }

  /** Calls `listener` with each revocation, from any instance, once committed. */
  onRevocation(listener: (revocation: Revocation) => void): () => void {
    this.revocations.on('revocation', listener);
    return () => this.revocations.off('revocation', listener);
  }

  /**
   * Calls `listener` when revocations may have been missed (the notification connection was
   * re-established): whatever a listener remembers of apps may be stale.
   */
  onResync(listener: () => void): () => void {
    this.revocations.on('resync', listener);
    return () => this.revocations.off('resync', listener);
  }

  /**
   * Rereads blocks, deactivations and revoked debug tokens; a failure keeps the previous sets
   * (retried after the interval). Until apps and attestation have provided their sources nothing
   * is read and the deny set does not count as loaded: it would lack their parts.
   */
  reload(): Promise<void> {
    if (this.sources.missing().length) return Promise.resolve();
    this.loading ??= this.read()
      .catch(() => undefined)
      .finally(() => {
        this.loadedAt = Date.now();
        this.loading = null;
      });
    return this.loading;
  }

  private async read(): Promise<void> {
    this.arrivedDuringLoad = [];
    try {
      const [devices, debugTokens, inactiveApps] = await Promise.all([
        this.dataSource.query<{ app_id: string; key_id: string }[]>(
          `SELECT app_id, key_id FROM devices WHERE is_blocked`,
        ),
        this.sources.revokedDebugTokens(REVOKED_DEBUG_TOKENS_KEPT_MS),
        this.sources.inactiveApps(),
      ]);
      this.blocked = new Set([
        ...devices.map((row) => entry(row.app_id, row.key_id)),
        ...debugTokens.map((token) => debugEntry(token.appId, token.tokenId)),
      ]);
      this.inactiveApps = new Set(inactiveApps);
      for (const revocation of this.arrivedDuringLoad) this.apply(revocation);
      this.loaded = true;
    } finally {
      this.arrivedDuringLoad = null;
    }
  }

  private receive(payload: string): void {
    const revocation = parseRevocation(payload);
    if (!revocation) return;
    this.arrivedDuringLoad?.push(revocation);
    this.apply(revocation);
    this.revocations.emit('revocation', revocation);
  }

  private apply(revocation: Revocation): void {
    switch (revocation.kind) {
      case 'device':
        for (const appId of revocation.appIds) {
          if (revocation.blocked) this.blocked.add(entry(appId, revocation.keyId));
          else this.blocked.delete(entry(appId, revocation.keyId));
        }
        return;
      case 'app':
        if (revocation.state === 'deleted') {
          this.deletedApps.set(revocation.appId, Date.now() + MAX_TOKEN_LIFETIME_MS);
          this.inactiveApps.delete(revocation.appId);
        } else if (revocation.state === 'inactive') this.inactiveApps.add(revocation.appId);
        else this.inactiveApps.delete(revocation.appId);
        return;
      case 'debugToken':
        this.blocked.add(debugEntry(revocation.appId, revocation.tokenId));
        return;
    }
  }
}

function entry(appId: string, keyId: string): string {
  return `${appId}\u0000${keyId}`;
}

function debugEntry(appId: string, tokenId: string): string {
  return `${appId}\u0000debug\u0000${tokenId}`;
}

/** Only what this service announces; anything else on the channel is ignored. */
export function parseRevocation(payload: string): Revocation | null {
  let value: unknown;
  try {
    value = JSON.parse(payload);
  } catch {
    return null;
  }
  if (typeof value !== 'object' || value === null) return null;
  const candidate = value as Record<string, unknown>;
  if (
    candidate.kind === 'device' &&
    Array.isArray(candidate.appIds) &&
    candidate.appIds.every((id) => typeof id === 'string') &&
    typeof candidate.keyId === 'string' &&
    typeof candidate.blocked === 'boolean'
  ) {
    return { kind: 'device', appIds: candidate.appIds, keyId: candidate.keyId, blocked: candidate.blocked };
  }
  if (
    candidate.kind === 'app' &&
    typeof candidate.appId === 'string' &&
    (candidate.state === 'active' || candidate.state === 'inactive' || candidate.state === 'deleted')
  ) {
    return { kind: 'app', appId: candidate.appId, state: candidate.state };
  }
  if (candidate.kind === 'debugToken' && typeof candidate.appId === 'string' && typeof candidate.tokenId === 'string') {
    return { kind: 'debugToken', appId: candidate.appId, tokenId: candidate.tokenId };
  }
  return null;
}
