import { Injectable } from '@nestjs/common';
import type { JWK } from 'jose';
import { UnitOfWork } from '../database/unit-of-work.js';

const KEY_LOCK = 727_002;

/**
 * The owner of `signing_keys` (service-wide, no tenant): the RS256 keys device tokens are signed
 * with, the current one and those retired but still published.
 */
@Injectable()
export class SigningKeysRepository {
  constructor(private readonly uow: UnitOfWork) {}

  /** Serializes key changes across instances until the unit of work ends. */
  async lockKeys(): Promise<void> {
    await this.uow.manager().query('SELECT pg_advisory_xact_lock($1)', [KEY_LOCK]);
  }

  /** The current key's id and private key, or null when there is none yet. */
  async current(): Promise<{ kid: string; privateKeyPem: string } | null> {
    const rows = await this.uow
      .manager()
      .query<{ kid: string; private_key_pem: string }[]>(
        `SELECT kid, private_key_pem FROM signing_keys WHERE is_current`,
      );
    return rows[0] ? { kid: rows[0].kid, privateKeyPem: rows[0].private_key_pem } : null;
  }

  /**
   * The published keys, by id: the current one first, then those retired less than `graceSeconds`
   * ago, newest first, each retired one with the instant (epoch ms) it stops verifying. The JWKS
   * lists exactly these, and token verification uses no other.
   */
  async publicKeys(graceSeconds: number): Promise<{ kid: string; publicJwk: JWK; verifiesUntil: number | null }[]> {
    const rows = await this.uow.manager().query<{ kid: string; public_jwk: JWK; verifies_until: string | null }[]>(
      `SELECT kid, public_jwk,
              CASE WHEN is_current THEN NULL
                   ELSE floor(extract(epoch FROM retired_at + make_interval(secs => $1)) * 1000) END AS verifies_until
         FROM signing_keys
        WHERE is_current OR retired_at > now() - make_interval(secs => $1)
        ORDER BY is_current DESC, created_at DESC`,
      [graceSeconds],
    );
    return rows.map((row) => ({
      kid: row.kid,
      publicJwk: row.public_jwk,
      verifiesUntil: row.verifies_until === null ? null : Number(row.verifies_until),
    }));
  }

  /** Retires the current key and makes `kid` current (again, when it was stored before). */
  async makeCurrent(kid: string, privateKeyPem: string, publicJwk: JWK): Promise<void> {
    await this.uow.manager().query(`UPDATE signing_keys SET is_current = false, retired_at = now() WHERE is_current`);
    await this.uow.manager().query(
      `INSERT INTO signing_keys (kid, private_key_pem, public_jwk, is_current) VALUES ($1, $2, $3, true)
       ON CONFLICT (kid) DO UPDATE SET is_current = true, retired_at = NULL`,
      [kid, privateKeyPem, JSON.stringify(publicJwk)],
    );
  }
}
