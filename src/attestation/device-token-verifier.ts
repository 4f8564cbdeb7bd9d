import { createPublicKey, type KeyObject } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { jwtVerify, type JWK, type JWTPayload } from 'jose';
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
 * Verifies the RS256 tokens this service minted, for SDK routes that take them (flags). Public
 * keys are cached by `kid`; an unknown `kid` reloads them (a rotation on another instance), at
 * most every ten seconds so garbage tokens cannot hammer the database.
 */
@Injectable()
export class DeviceTokenVerifier {
  private keys = new Map<string, KeyObject>();
  private loadedAt = 0;

  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async verify(token: string): Promise<DeviceToken | null> {
    try {
      const { payload } = await jwtVerify(token, (header) => this.key(header.kid), { algorithms: ['RS256'] });
      if (typeof payload.sub !== 'string' || typeof payload.app_id !== 'string' || typeof payload.org_id !== 'string') {
        return null;
      }
      return payload as DeviceToken;
    } catch {
      return null;
    }
  }

  private async key(kid: string | undefined): Promise<KeyObject> {
    if (!kid) throw new Error('token has no kid');
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
