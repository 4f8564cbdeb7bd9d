import { Inject, Injectable, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import type { AppId } from '../common/access/tenant-id.js';
import { DiscoveryService } from '@nestjs/core';
import { debugTokenIdOf } from './debug-subject.js';
import { DenySetSourcesService } from './deny-set-sources.service.js';
import { DenySetState, type Revocation, type TokenRefusal } from './deny-set-state.js';
import { discovered } from '../common/discovery/discovered.js';
import { serviceUnavailable } from '../common/errors/app-exception.js';
import { createLogger } from '../common/logging/logger.js';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import type { PgListener } from '../database/pg-listener.js';
import { DevicesRepository } from './devices.repository.js';
import { TokenRevocationsRepository } from './token-revocations.repository.js';

/** How stale another instance's block may be on this one if its notification was lost. */
export const DENY_SET_REFRESH_MS = 5_000;

export type { Revocation, TokenRefusal };

/** What a feature does when device tokens are revoked, on every instance. */
export interface RevocationListener {
  /** A revocation, from any instance, once committed. */
  revoked(revocation: Revocation): void;
  /**
   * Revocations may have been missed (the notification connection was re-established): whatever
   * the listener remembers of apps may be stale.
   */
  resynced?(): void;
}

/** Marks a provider or controller as a `RevocationListener`: DenySet calls it. */
export const OnTokenRevocation = DiscoveryService.createDecorator<void>();

/**
 * The deny set of device tokens. Device tokens live up to 30 days, so blocking a device,
 * deactivating or deleting its app, or deleting its organization must reach the tokens already
 * out: the SDK routes that take a token (GET /flags, the stream, evaluate) ask here on every
 * request (set lookups, no query). Changes arrive through PostgreSQL LISTEN/NOTIFY on every
 * instance, the changing one included, within milliseconds of the commit; each one is passed on to
 * the providers marked `@OnTokenRevocation()` (the apps feature drops the app from its tenant
 * cache, open event streams close). A deleted app stays denied for the longest token lifetime; blocks and deactivations
 * last as long as they do in the database, which is reread every DENY_SET_REFRESH_MS in
 * the background in case a notification was lost.
 *
 * Revoked debug tokens are in the set too, for as long as a device token minted from one could
 * live: a token whose `sub` is `debug:<tokenId>[:…]` is refused once its debug token is revoked.
 * Only those that were exchanged: one never exchanged minted no device token.
 *
 * The reread is incremental (decision 0065): blocked devices and revoked debug tokens come as the
 * rows changed since the previous read (a transaction-id cursor that never skips a transaction
 * committed out of order), the first read of an instance whole. Inactive apps are reread whole
 * (a few per organization). What a reread costs follows what changed, not what tenants keep.
 *
 * Blocked devices are read here; inactive apps and revoked debug tokens are read by their owners,
 * apps and attestation, through DenySetSourcesService (both import devices).
 */
@Injectable()
export class DenySet implements OnModuleInit, OnModuleDestroy {
  private readonly state = new DenySetState();
  /** When the last read ended (failed or not): the next one is due DENY_SET_REFRESH_MS later. */
  private loadedAt = 0;
  /** Whether a read has ever completed: until then the sets are not the deny set. */
  private loaded = false;
  private loading: Promise<void> | null = null;
  /** Revocations that arrived while a reload was reading: applied again on top of its result. */
  private arrivedDuringLoad: Revocation[] | null = null;
  private listeners: readonly RevocationListener[] = [];
  private readonly listener: PgListener;

  constructor(
    private readonly devices: DevicesRepository,
    revocationChannel: TokenRevocationsRepository,
    private readonly sources: DenySetSourcesService,
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly discovery: DiscoveryService,
  ) {
    this.listener = revocationChannel.listener({
      logger: createLogger(config).child({ component: 'token-revocations' }),
      onMessage: (payload) => this.receive(payload),
      onReconnect: () => {
        for (const listener of this.listeners) listener.resynced?.();
        void this.reload();
      },
    });
  }

  async onModuleInit(): Promise<void> {
    this.listeners = discovered<RevocationListener, void>(this.discovery, OnTokenRevocation).map(
      ({ instance }) => instance,
    );
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
    } else if (Date.now() - this.loadedAt > DENY_SET_REFRESH_MS) void this.reload();
    return this.state.refusal(appId, keyId, Date.now());
  }

  /**
   * The same question read from the database, exact on every instance (backend verification,
   * where one query is affordable): why the token's subject is refused, or null.
   */
  async refusalNow(appId: AppId, keyId: string): Promise<'device_blocked' | 'debug_token_revoked' | null> {
    const debugTokenId = debugTokenIdOf(keyId);
    if (debugTokenId) {
      return (await this.sources.debugTokenRevoked(appId, debugTokenId)) ? 'debug_token_revoked' : null;
    }
    return (await this.devices.isBlocked(appId, keyId)) ? 'device_blocked' : null;
  }

  /** Whether this instance holds the debug token as revoked (its device tokens refused). */
  holdsRevokedDebugToken(appId: string, tokenId: string): boolean {
    return this.state.holdsDebugToken(appId, tokenId, Date.now());
  }

  /** How many entries each part of the deny set holds. */
  sizes() {
    return this.state.sizes();
  }

  /** A debug token revoked on this instance after it was exchanged, before its notification is back. */
  noteRevokedDebugToken(appId: string, tokenId: string): void {
    this.state.apply({ kind: 'debugToken', appId, tokenId }, Date.now());
  }

  /** What a committed block or unblock on this instance changed, before its notification is back. */
  note(appId: string, keyId: string, blocked: boolean): void {
    this.state.apply({ kind: 'device', appIds: [appId], keyId, blocked }, Date.now());
  }

  /**
   * Reads what changed in blocks and revoked debug tokens since the last read, and inactive apps;
   * a failure of any keeps the previous sets and cursors (retried after the interval). Until apps
   * and attestation have provided their sources nothing is read and the deny set does not count
   * as loaded: it would lack their parts.
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
      const since = this.state.cursors();
      const [devices, debugTokens, inactiveApps] = await Promise.all([
        this.devices.blockChanges(since.devices),
        this.sources.revokedDebugTokens(since.debugTokens),
        this.sources.inactiveApps(),
      ]);
      const now = Date.now();
      this.state.applyRead({ devices, debugTokens, inactiveApps }, now);
      for (const revocation of this.arrivedDuringLoad) this.state.apply(revocation, now);
      this.loaded = true;
    } finally {
      this.arrivedDuringLoad = null;
    }
  }

  private receive(payload: string): void {
    const revocation = parseRevocation(payload);
    if (!revocation) return;
    this.arrivedDuringLoad?.push(revocation);
    this.state.apply(revocation, Date.now());
    for (const listener of this.listeners) listener.revoked(revocation);
  }
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
