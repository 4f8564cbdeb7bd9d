import { debugTokenIdOf } from './debug-subject.js';

/** The longest a device token lives (the largest `overrideExpirationTime`, 30 days). */
export const MAX_TOKEN_LIFETIME_MS = 2_592_000 * 1000;

/** A day beyond the longest token lifetime: what a revoked debug token is held for at most (clock skew). */
export const REVOKED_DEBUG_TOKEN_HELD_MS = MAX_TOKEN_LIFETIME_MS + 86_400_000;

/** How often entries past their time (revoked debug tokens, deleted apps) are swept out. */
export const DENY_SET_SWEEP_MS = 3_600_000;

/**
 * What makes existing device tokens stop (or start again) working, announced to every instance
 * with `pg_notify` in the transaction of the change: a device blocked or unblocked in some apps,
 * an app deactivated, reactivated or deleted (deleting an organization deletes each of its apps),
 * a debug token that was exchanged revoked.
 */
export type Revocation =
  | { kind: 'device'; appIds: string[]; keyId: string; blocked: boolean }
  | { kind: 'app'; appId: string; state: 'active' | 'inactive' | 'deleted' }
  | { kind: 'debugToken'; appId: string; tokenId: string };

export interface TokenRefusal {
  message: string;
  hint: string;
}

/**
 * What one read of a part of the deny set gave: the rows whose state changed since the cursor it
 * was asked with (every row in the set when that was null), and the cursor to ask the next read
 * with. The cursor is opaque here: the reader's database decides it (decision 0065).
 */
export interface DenySetDelta<T> {
  cursor: string;
  rows: T[];
}

/** A device's block state now, in one app. */
export interface BlockChange {
  appId: string;
  keyId: string;
  blocked: boolean;
}

/** A revoked debug token that was exchanged: the device tokens it minted are refused until `untilMs`. */
export interface RevokedDebugToken {
  appId: string;
  tokenId: string;
  /** When the last device token it can have minted has expired (ms since the epoch). */
  untilMs: number;
}

/** One read of every part: blocked devices and revoked debug tokens as changes, inactive apps whole. */
export interface DenySetRead {
  devices: DenySetDelta<BlockChange>;
  debugTokens: DenySetDelta<RevokedDebugToken>;
  inactiveApps: string[];
}

/** Where the next read starts, per incremental part (null: a first, whole read). */
export interface DenySetCursors {
  devices: string | null;
  debugTokens: string | null;
}

/**
 * The deny set itself, without I/O: what a read and each announced revocation change, and what a
 * token is refused for. A read brings only what changed since the previous one (its cursors),
 * so a reread costs what changed, not what tenants have accumulated; entries that time out
 * (revoked debug tokens, deleted apps) are dropped when looked up or swept.
 */
export class DenySetState {
  private readonly blocked = new Set<string>();
  /** Revoked debug token entry → until when its device tokens are refused (ms). */
  private readonly revokedDebugTokens = new Map<string, number>();
  private inactiveApps = new Set<string>();
  /** Deleted app → when its last token has expired (ms). */
  private readonly deletedApps = new Map<string, number>();
  private cursorsRead: DenySetCursors = { devices: null, debugTokens: null };
  private sweptAt = 0;

  /** Where the next read starts. */
  cursors(): DenySetCursors {
    return { ...this.cursorsRead };
  }

  /** Applies a read made from `cursors()`, then moves the cursors on. */
  applyRead(read: DenySetRead, now: number): void {
    for (const change of read.devices.rows) {
      if (change.blocked) this.blocked.add(entry(change.appId, change.keyId));
      else this.blocked.delete(entry(change.appId, change.keyId));
    }
    for (const token of read.debugTokens.rows) {
      if (token.untilMs > now) this.revokedDebugTokens.set(debugEntry(token.appId, token.tokenId), token.untilMs);
    }
    this.inactiveApps = new Set(read.inactiveApps);
    this.cursorsRead = { devices: read.devices.cursor, debugTokens: read.debugTokens.cursor };
    this.sweep(now);
  }

  /** An announced revocation, from this instance or another. */
  apply(revocation: Revocation, now: number): void {
    switch (revocation.kind) {
      case 'device':
        for (const appId of revocation.appIds) {
          if (revocation.blocked) this.blocked.add(entry(appId, revocation.keyId));
          else this.blocked.delete(entry(appId, revocation.keyId));
        }
        return;
      case 'app':
        if (revocation.state === 'deleted') {
          this.deletedApps.set(revocation.appId, now + MAX_TOKEN_LIFETIME_MS);
          this.inactiveApps.delete(revocation.appId);
        } else if (revocation.state === 'inactive') this.inactiveApps.add(revocation.appId);
        else this.inactiveApps.delete(revocation.appId);
        return;
      case 'debugToken': {
        // The announcement carries no time: held as long as any token can live; the next read
        // brings the row's own time.
        const key = debugEntry(revocation.appId, revocation.tokenId);
        if (!this.revokedDebugTokens.has(key)) this.revokedDebugTokens.set(key, now + REVOKED_DEBUG_TOKEN_HELD_MS);
        return;
      }
    }
  }

  /** Why a verified token of `keyId` for `appId` is refused, or null when it is not. */
  refusal(appId: string, keyId: string, now: number): TokenRefusal | null {
    const deletedUntil = this.deletedApps.get(appId);
    if (deletedUntil !== undefined) {
      if (deletedUntil > now) {
        return { message: 'The attestation token belongs to a deleted app', hint: 'The app is no longer registered' };
      }
      this.deletedApps.delete(appId);
    }
    if (this.inactiveApps.has(appId)) {
      return { message: 'The attestation token belongs to a deactivated app', hint: 'Activate it in the dashboard' };
    }
    const debugTokenId = debugTokenIdOf(keyId);
    if (debugTokenId) {
      if (!this.holdsDebugToken(appId, debugTokenId, now)) return null;
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

  /** Whether the device tokens minted from this debug token are refused now. */
  holdsDebugToken(appId: string, tokenId: string, now: number): boolean {
    const key = debugEntry(appId, tokenId);
    const until = this.revokedDebugTokens.get(key);
    if (until === undefined) return false;
    if (until > now) return true;
    this.revokedDebugTokens.delete(key);
    return false;
  }

  /** How many entries each part holds (what memory grows with). */
  sizes(): { blockedDevices: number; revokedDebugTokens: number; inactiveApps: number; deletedApps: number } {
    return {
      blockedDevices: this.blocked.size,
      revokedDebugTokens: this.revokedDebugTokens.size,
      inactiveApps: this.inactiveApps.size,
      deletedApps: this.deletedApps.size,
    };
  }

  /** Drops the entries past their time, at most once per DENY_SET_SWEEP_MS (a walk over them). */
  sweep(now: number, force = false): void {
    if (!force && now - this.sweptAt < DENY_SET_SWEEP_MS) return;
    this.sweptAt = now;
    for (const [key, until] of this.revokedDebugTokens) if (until <= now) this.revokedDebugTokens.delete(key);
    for (const [appId, until] of this.deletedApps) if (until <= now) this.deletedApps.delete(appId);
  }
}

function entry(appId: string, keyId: string): string {
  return `${appId}\u0000${keyId}`;
}

function debugEntry(appId: string, tokenId: string): string {
  return `${appId}\u0000debug\u0000${tokenId}`;
}
