import { createPublicKey, type KeyObject } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { JwtService } from '@nestjs/jwt';
import type { JWTPayload } from 'jose';
import { SigningKeysRepository } from './signing-keys.repository.js';
import { KEYS_RELOAD_MS, RETIRED_KEY_GRACE_MS } from './signing-keys.service.js';

/** The verified claims of a device's attestation token. */
export interface DeviceToken extends JWTPayload {
  sub: string;
  app_id: string;
  org_id: string;
  risk_score?: number;
  env?: string;
}

/** Why a token failed the checks of `inspect`. */
export type TokenDefect = 'malformed' | 'invalid_signature' | 'expired' | 'not_yet_valid';

export type TokenInspection =
  { readonly ok: true; readonly claims: DeviceToken } | { readonly ok: false; readonly reason: TokenDefect };

const UNKNOWN_KID_RELOAD_MS = 10_000;
/** Keys read longer ago than this are read again before a token is verified with them. */
const STALE_KEYS_MS = 10 * KEYS_RELOAD_MS;

/** How many verified tokens each instance remembers (about 1 KB each). */
export const VERIFIED_TOKEN_CACHE_SIZE = 10_000;

/**
 * Verifies the RS256 tokens this service minted (through `@nestjs/jwt`), for the device-token
 * strategy of SDK routes that take them (flags). Public keys are cached by `kid`; an unknown `kid`
 * reloads them (a rotation on another instance), at most every ten seconds so garbage tokens
 * cannot hammer the database; they are read again every minute anyway. Only what this service
 * mints is accepted: RS256, the `kid` of a key still published (the current one, or one retired
 * less than `RETIRED_KEY_GRACE_MS` ago: a rotated-out key, leaked or not, stops verifying when it
 * leaves the JWKS), an unexpired `exp`, not before `nbf`, and the three identifying claims.
 *
 * An SDK shows the same token on every request until it refreshes it, so a token whose signature
 * checked out is remembered, by its exact text, until its `exp`: the next request with it costs a
 * map lookup and a clock comparison instead of an RSA verification. At most
 * `VERIFIED_TOKEN_CACHE_SIZE` are kept, the oldest forgotten first. What can end a token before its
 * `exp` (a blocked device, a deactivated app, a revoked debug token) is not the signature: the
 * device-token strategy checks the deny set on every request, cached token or not.
 */
@Injectable()
export class DeviceTokenVerifier {
  private keys = new Map<string, { key: KeyObject; verifiesUntil: number | null }>();
  private loadedAt = 0;
  private loading: Promise<void> | null = null;
  private readonly verified = new Map<string, DeviceToken>();

  constructor(
    private readonly signingKeys: SigningKeysRepository,
    private readonly jwt: JwtService,
  ) {}

  async verify(token: string): Promise<DeviceToken | null> {
    const inspected = await this.inspect(token);
    return inspected.ok ? inspected.claims : null;
  }

  /** The same checks as `verify`, naming the first that failed (backend verification). */
  async inspect(token: string): Promise<TokenInspection> {
    const remembered = this.verified.get(token);
    if (remembered) {
      if (remembered.exp! > Date.now() / 1000) return { ok: true, claims: remembered };
      this.verified.delete(token);
      return { ok: false, reason: 'expired' };
    }
    const inspected = await this.check(token);
    if (inspected.ok) this.remember(token, inspected.claims);
    return inspected;
  }

  private async check(token: string): Promise<TokenInspection> {
    const kid = keyIdOf(token);
    if (!kid || token.split('.').length !== 3) return { ok: false, reason: 'malformed' };
    const key = await this.key(kid).catch(() => null);
    if (!key) return { ok: false, reason: 'invalid_signature' };
    let payload: Partial<DeviceToken>;
    try {
      // jsonwebtoken takes the KeyObject as it is; @nestjs/jwt's option type names only PEM text,
      // which would be parsed into a key again on every request.
      const publicKey = key as unknown as string;
      payload = this.jwt.verify<Partial<DeviceToken>>(token, { publicKey, algorithms: ['RS256'] });
    } catch (error) {
      return { ok: false, reason: defectOf(error) };
    }
    if (typeof payload.exp !== 'number') return { ok: false, reason: 'malformed' };
    if (typeof payload.sub !== 'string' || typeof payload.app_id !== 'string' || typeof payload.org_id !== 'string') {
      return { ok: false, reason: 'malformed' };
    }
    return { ok: true, claims: payload as DeviceToken };
  }

  /** Only a token valid from now on is remembered: one with a future `nbf` is checked again. */
  private remember(token: string, claims: DeviceToken): void {
    if (typeof claims.nbf === 'number' && claims.nbf > Date.now() / 1000) return;
    if (this.verified.size >= VERIFIED_TOKEN_CACHE_SIZE) {
      this.verified.delete(this.verified.keys().next().value!);
    }
    this.verified.set(token, Object.freeze(claims));
  }

  private async key(kid: string): Promise<KeyObject> {
    const age = Date.now() - this.loadedAt;
    // An unknown kid waits for a read: a new one at most every ten seconds, or the one under way.
    if (!this.usable(kid) && (age > UNKNOWN_KID_RELOAD_MS || this.loading)) await this.reload();
    // Keys held for long (an idle instance) are read again before they are trusted; the minute's
    // re-read runs beside the request, so a known key does not wait on the database. Either way an
    // unreachable database leaves the keys held as they were (their grace still ends on time).
    else if (age > STALE_KEYS_MS) await this.reload().catch(() => undefined);
    else if (age > KEYS_RELOAD_MS) this.reload().catch(() => undefined);
    const entry = this.usable(kid);
    if (!entry) throw new Error('unknown kid');
    return entry.key;
  }

  /** One read of the keys at a time, however many requests ask for it. */
  private reload(): Promise<void> {
    this.loading ??= this.load().finally(() => {
      this.loading = null;
    });
    return this.loading;
  }

  /** The key of `kid` while it may verify: known, and current or within its grace. */
  private usable(kid: string) {
    const entry = this.keys.get(kid);
    return entry && (entry.verifiesUntil === null || Date.now() < entry.verifiesUntil) ? entry : undefined;
  }

  private async load(): Promise<void> {
    // When it was last tried, not when it last worked: a failing database is asked at the same pace.
    this.loadedAt = Date.now();
    const rows = await this.signingKeys.publicKeys(RETIRED_KEY_GRACE_MS / 1000);
    this.keys = new Map(
      rows.map((row) => [
        row.kid,
        { key: createPublicKey({ key: row.publicJwk, format: 'jwk' }), verifiesUntil: row.verifiesUntil },
      ]),
    );
  }
}

/** The `kid` of a compact JWS's protected header, read without trusting anything else in it. */
function keyIdOf(token: string): string | null {
  const dot = token.indexOf('.');
  if (dot <= 0) return null;
  try {
    const header: unknown = JSON.parse(Buffer.from(token.slice(0, dot), 'base64url').toString('utf8'));
    const kid = (header as { kid?: unknown } | null)?.kid;
    return typeof kid === 'string' && kid ? kid : null;
  } catch {
    return null;
  }
}

/** jsonwebtoken's refusals by name: expiry and `nbf` are checked after the signature. */
function defectOf(error: unknown): TokenDefect {
  const name = error instanceof Error ? error.name : '';
  if (name === 'TokenExpiredError') return 'expired';
  if (name === 'NotBeforeError') return 'not_yet_valid';
  const message = error instanceof Error ? error.message : '';
  return message === 'invalid signature' ? 'invalid_signature' : 'malformed';
}
