import { createPrivateKey, createPublicKey, generateKeyPairSync, verify, type KeyObject } from 'node:crypto';
import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import { calculateJwkThumbprint, exportJWK, type JWK } from 'jose';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { UnitOfWork } from '../database/unit-of-work.js';
import { SigningKeysRepository } from './signing-keys.repository.js';
import { signRs256Jwt } from './rs256-signer.js';

export interface SigningKey {
  kid: string;
  privateKey: KeyObject;
}

/** Retired keys stay published this long: longer than any token's lifetime (30 days at most). */
export const RETIRED_KEY_GRACE_MS = 31 * 24 * 60 * 60 * 1000;
/** How often an instance reads the keys again, so a rotation made on another one is seen. */
export const KEYS_RELOAD_MS = 60_000;

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
    private readonly uow: UnitOfWork,
    private readonly keys: SigningKeysRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async onModuleInit(): Promise<void> {
    await this.ensureKey();
  }

  /** The key new tokens are signed with; re-read each minute so a rotation elsewhere is seen. */
  async signingKey(): Promise<SigningKey> {
    if (!this.current || Date.now() - this.loadedAt > KEYS_RELOAD_MS) await this.load();
    return this.current!;
  }

  /**
   * Signs a probe token with the current key on the thread pool, as minting does, and verifies it
   * with the key's public half: readiness's proof that tokens can be minted (it throws otherwise).
   */
  async selfCheck(): Promise<void> {
    const { kid, privateKey } = await this.signingKey();
    const token = await signRs256Jwt(kid, { probe: true, iat: Math.floor(Date.now() / 1000) }, privateKey);
    const [header, payload, signature] = token.split('.');
    const valid = await new Promise<boolean>((resolve, reject) =>
      verify(
        'sha256',
        Buffer.from(`${header}.${payload}`),
        createPublicKey(privateKey),
        Buffer.from(signature, 'base64url'),
        (error, result) => (error ? reject(error) : resolve(result)),
      ),
    );
    if (!valid) throw new Error('the signing key does not verify its own signature');
  }

  async jwks(): Promise<{ keys: JWK[] }> {
    return { keys: (await this.keys.publicKeys(RETIRED_KEY_GRACE_MS / 1000)).map((key) => key.publicJwk) };
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
      await this.uow.run(async () => {
        await this.keys.lockKeys();
        if (!(await this.keys.current())) {
          await this.insert(generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey, true);
        }
      });
    }
    await this.load();
  }

  /** Stores a key as current. With `force` false a configured key that is already current stays. */
  private async store(privateKey: KeyObject, force: boolean): Promise<string> {
    return this.uow.run(async () => {
      await this.keys.lockKeys();
      return this.insert(privateKey, force);
    });
  }

  private async insert(privateKey: KeyObject, force: boolean): Promise<string> {
    const jwk = await exportJWK(createPublicKey(privateKey));
    const kid = await calculateJwkThumbprint(jwk);
    if (!force && (await this.keys.current())?.kid === kid) return kid;
    const publicJwk: JWK = { ...jwk, kid, alg: 'RS256', use: 'sig' };
    await this.keys.makeCurrent(kid, privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(), publicJwk);
    return kid;
  }

  private async load(): Promise<void> {
    const current = await this.keys.current();
    if (!current) throw new Error('no current signing key');
    if (this.current?.kid !== current.kid) {
      this.current = { kid: current.kid, privateKey: createPrivateKey(current.privateKeyPem) };
    }
    this.loadedAt = Date.now();
  }
}
