import { createPublicKey, type KeyObject } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { JwtService } from '@nestjs/jwt';
import { InjectDataSource } from '@nestjs/typeorm';
import type { JWK, JWTPayload } from 'jose';
import { DataSource } from 'typeorm';

/** The verified claims of a device's attestation token. */
export interface DeviceToken extends JWTPayload {
  sub: string;
  app_id: string;
  org_id: string;
  risk_score?: number;
  env?: string;
}

const UNKNOWN_KID_RELOAD_MS = 10_000;

/**
 * Verifies the RS256 tokens this service minted (through `@nestjs/jwt`), for the device-token
 * strategy of SDK routes that take them (flags). Public keys are cached by `kid`; an unknown `kid`
 * reloads them (a rotation on another instance), at most every ten seconds so garbage tokens
 * cannot hammer the database. Only what this service mints is accepted: RS256, a known `kid`, an
 * unexpired `exp`, not before `nbf`, and the three identifying claims.
 */
@Injectable()
export class DeviceTokenVerifier {
  private keys = new Map<string, KeyObject>();
  private loadedAt = 0;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly jwt: JwtService,
  ) {}

  async verify(token: string): Promise<DeviceToken | null> {
    const kid = keyIdOf(token);
    if (!kid) return null;
    const key = await this.key(kid).catch(() => null);
    if (!key) return null;
    let payload: Partial<DeviceToken>;
    try {
      // jsonwebtoken takes the KeyObject as it is; @nestjs/jwt's option type names only PEM text,
      // which would be parsed into a key again on every request.
      const publicKey = key as unknown as string;
      payload = this.jwt.verify<Partial<DeviceToken>>(token, { publicKey, algorithms: ['RS256'] });
    } catch {
      return null;
    }
    if (typeof payload.exp !== 'number') return null;
    if (typeof payload.sub !== 'string' || typeof payload.app_id !== 'string' || typeof payload.org_id !== 'string') {
      return null;
    }
    return payload as DeviceToken;
  }

  private async key(kid: string): Promise<KeyObject> {
    let key = this.keys.get(kid);
    if (!key && Date.now() - this.loadedAt > UNKNOWN_KID_RELOAD_MS) {
      await this.load();
      key = this.keys.get(kid);
    }
    if (!key) throw new Error('unknown kid');
    return key;
  }

  private async load(): Promise<void> {
    const rows: { kid: string; public_jwk: JWK }[] = await this.dataSource.query(
      `SELECT kid, public_jwk FROM signing_keys`,
    );
    this.keys = new Map(rows.map((row) => [row.kid, createPublicKey({ key: row.public_jwk as never, format: 'jwk' })]));
    this.loadedAt = Date.now();
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
