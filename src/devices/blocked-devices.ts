import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { debugTokenIdOf } from '../attestation/debug-subject.js';

/** How stale another instance's block may be on this one. */
export const BLOCKED_DEVICES_REFRESH_MS = 5_000;

/** Longer than any device token lives (`overrideExpirationTime` is at most 30 days). */
const REVOKED_DEBUG_TOKENS_KEPT = '31 days';

/**
 * The deny set of device tokens: the keys of blocked devices, by app. Device tokens live up to 30
 * days, so blocking a device must reach the tokens it already holds: the SDK routes that take a
 * token ask here on every request (one set lookup). A block made on this instance applies at
 * once; one made on another instance within BLOCKED_DEVICES_REFRESH_MS, when the set is reread
 * (one indexed query, in the background, while the previous set keeps serving). Unblocking
 * removes the entry the same way, so an entry lasts exactly as long as the block.
 *
 * Revoked debug tokens are in the set too, for as long as a device token minted from one could
 * live: a token whose `sub` is `debug:<tokenId>[:…]` is refused once its debug token is revoked.
 */
@Injectable()
export class BlockedDevices {
  private blocked = new Set<string>();
  private loadedAt = 0;
  private loading: Promise<void> | null = null;

  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async isBlocked(appId: string, keyId: string): Promise<boolean> {
    if (this.loadedAt === 0) await this.reload();
    else if (Date.now() - this.loadedAt > BLOCKED_DEVICES_REFRESH_MS) void this.reload();
    const debugTokenId = debugTokenIdOf(keyId);
    return this.blocked.has(debugTokenId ? debugEntry(appId, debugTokenId) : entry(appId, keyId));
  }

  /**
   * The same question read from the database, exact on every instance (backend verification,
   * where one query is affordable): why the token's subject is refused, or null.
   */
  async refusalNow(appId: string, keyId: string): Promise<'device_blocked' | 'debug_token_revoked' | null> {
    const debugTokenId = debugTokenIdOf(keyId);
    if (debugTokenId) {
      const rows: unknown[] = await this.dataSource.query(
        `SELECT 1 FROM debug_tokens WHERE id = $1 AND app_id = $2 AND revoked_at IS NOT NULL`,
        [debugTokenId, appId],
      );
      return rows.length ? 'debug_token_revoked' : null;
    }
    const rows: unknown[] = await this.dataSource.query(
      `SELECT 1 FROM devices WHERE app_id = $1 AND key_id = $2 AND is_blocked`,
      [appId, keyId],
    );
    return rows.length ? 'device_blocked' : null;
  }

  /** A debug token revoked on this instance (revocation is permanent). */
  noteRevokedDebugToken(appId: string, tokenId: string): void {
    this.blocked.add(debugEntry(appId, tokenId));
  }

  /** What a committed block or unblock on this instance changed. */
  note(appId: string, keyId: string, blocked: boolean): void {
    if (blocked) this.blocked.add(entry(appId, keyId));
    else this.blocked.delete(entry(appId, keyId));
  }

  /** Rereads the set; a failure keeps the previous one (and is retried after the interval). */
  reload(): Promise<void> {
    this.loading ??= this.dataSource
      .query(
        `SELECT app_id, key_id, false AS debug FROM devices WHERE is_blocked
         UNION ALL
         SELECT app_id, id::text, true FROM debug_tokens
          WHERE revoked_at > now() - interval '${REVOKED_DEBUG_TOKENS_KEPT}'`,
      )
      .then((rows: { app_id: string; key_id: string; debug: boolean }[]) => {
        this.blocked = new Set(
          rows.map((row) => (row.debug ? debugEntry(row.app_id, row.key_id) : entry(row.app_id, row.key_id))),
        );
      })
      .catch(() => undefined)
      .finally(() => {
        this.loadedAt = Date.now();
        this.loading = null;
      });
    return this.loading;
  }
}

function entry(appId: string, keyId: string): string {
  return `${appId}\u0000${keyId}`;
}

function debugEntry(appId: string, tokenId: string): string {
  return `${appId}\u0000debug\u0000${tokenId}`;
}
