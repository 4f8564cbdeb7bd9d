import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { calculateJwkThumbprint, exportJWK, type JWK } from 'jose';
import { DataSource } from 'typeorm';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';

export interface SigningKey {
  kid: string;
  privateKey: KeyObject;
}

/** Retired keys stay published this long: longer than any token's lifetime (30 days at most). */
export const RETIRED_KEY_GRACE_MS = 31 * 24 * 60 * 60 * 1000;
const RELOAD_MS = 60_000;
const KEY_LOCK = 727_002;

/**
 * RS256 token signing keys: JWT_PRIVATE_KEY when given, else generated once and kept in the
 * database so every instance signs with the same key. Rotation keeps the old public key in the
 * JWKS until every token it signed has expired.
 */
@Injectable()
export class SigningKeysService implements OnModuleInit {
  private current: SigningKey | null = null;
  private loadedAt = 0;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async onModuleInit(): Promise<void> {
    await this.ensureKey();
  }

  /** The key new tokens are signed with; re-read each minute so a rotation elsewhere is seen. */
  async signingKey(): Promise<SigningKey> {
    if (!this.current || Date.now() - this.loadedAt > RELOAD_MS) await this.load();
    return this.current!;
  }

  async jwks(): Promise<{ keys: JWK[] }> {
    const rows: { public_jwk: JWK }[] = await this.dataSource.query(
      `SELECT public_jwk FROM signing_keys
        WHERE is_current OR retired_at > now() - make_interval(secs => $1)
        ORDER BY is_current DESC, created_at DESC`,
      [RETIRED_KEY_GRACE_MS / 1000],
    );
    return { keys: rows.map((row) => row.public_jwk) };
  }

  /** Makes a fresh key current; the previous one is retired but stays published. */
  async rotate(): Promise<string> {
    const generated = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const kid = await this.store(generated.privateKey, true);
    await this.load();
    return kid;
  }

  private async ensureKey(): Promise<void> {
    if (this.config.jwtPrivateKey) {
      await this.store(createPrivateKey(this.config.jwtPrivateKey), false);
    } else {
      await this.dataSource.transaction(async (manager) => {
        await manager.query('SELECT pg_advisory_xact_lock($1)', [KEY_LOCK]);
        const existing: unknown[] = await manager.query(`SELECT 1 FROM signing_keys WHERE is_current`);
        if (!existing.length) {
          await this.insert(manager, generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey, true);
        }
      });
    }
    await this.load();
  }

  /** Stores a key as current. With `force` false a configured key that is already current stays. */
  private async store(privateKey: KeyObject, force: boolean): Promise<string> {
    return this.dataSource.transaction(async (manager) => {
      await manager.query('SELECT pg_advisory_xact_lock($1)', [KEY_LOCK]);
      return this.insert(manager, privateKey, force);
    });
  }

  private async insert(manager: DataSource['manager'], privateKey: KeyObject, force: boolean): Promise<string> {
    const jwk = await exportJWK(createPublicKey(privateKey));
    const kid = await calculateJwkThumbprint(jwk);
    const current: { kid: string }[] = await manager.query(`SELECT kid FROM signing_keys WHERE is_current`);
    if (!force && current[0]?.kid === kid) return kid;
    await manager.query(`UPDATE signing_keys SET is_current = false, retired_at = now() WHERE is_current`);
    await manager.query(
      `INSERT INTO signing_keys (kid, private_key_pem, public_jwk, is_current) VALUES ($1, $2, $3, true)
       ON CONFLICT (kid) DO UPDATE SET is_current = true, retired_at = NULL`,
      [
        kid,
        privateKey.export({ type: 'pkcs8', format: 'pem' }),
        JSON.stringify({ ...jwk, kid, alg: 'RS256', use: 'sig' }),
      ],
    );
    return kid;
  }

  private async load(): Promise<void> {
    const rows: { kid: string; private_key_pem: string }[] = await this.dataSource.query(
      `SELECT kid, private_key_pem FROM signing_keys WHERE is_current`,
    );
    if (!rows[0]) throw new Error('no current signing key');
    if (this.current?.kid !== rows[0].kid) {
      this.current = { kid: rows[0].kid, privateKey: createPrivateKey(rows[0].private_key_pem) };
    }
    this.loadedAt = Date.now();
  }
}
