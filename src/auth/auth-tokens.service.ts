import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';
import { randomSecret, sha256Hex } from '../common/crypto.js';
import { AuthToken, type TokenPurpose } from './auth-token.entity.js';

export const TOKEN_TTL_MS: Record<TokenPurpose, number> = {
  verify_email: 24 * 60 * 60 * 1000,
  reset_password: 60 * 60 * 1000,
  email_change: 60 * 60 * 1000,
};

/** At most this many unused, unexpired tokens per account and purpose. */
export const MAX_ACTIVE_TOKENS = 3;

/** Mailed one-time tokens: only their hashes are stored; each works once, before it expires. */
@Injectable()
export class AuthTokensService {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async issue(
    manager: EntityManager,
    userId: string,
    purpose: TokenPurpose,
    newEmail: string | null = null,
  ): Promise<string> {
    const token = randomSecret(32);
    await manager.insert(AuthToken, {
      userId,
      purpose,
      tokenHash: sha256Hex(token),
      newEmail,
      expiresAt: new Date(Date.now() + TOKEN_TTL_MS[purpose]),
      usedAt: null,
    });
    return token;
  }

  async activeCount(manager: EntityManager, userId: string, purpose: TokenPurpose): Promise<number> {
    return manager
      .createQueryBuilder(AuthToken, 't')
      .where('t.user_id = :userId AND t.purpose = :purpose AND t.used_at IS NULL AND t.expires_at > now()', {
        userId,
        purpose,
      })
      .getCount();
  }

  /** Seconds until the oldest active token of the purpose expires, freeing a slot. */
  async secondsUntilOneFrees(manager: EntityManager, userId: string, purpose: TokenPurpose): Promise<number> {
    const rows: { seconds: number | null }[] = await manager.query(
      `SELECT ceil(extract(epoch FROM min(expires_at) - now()))::int AS seconds FROM auth_tokens
        WHERE user_id = $1 AND purpose = $2 AND used_at IS NULL AND expires_at > now()`,
      [userId, purpose],
    );
    return rows[0]?.seconds ?? 1;
  }

  /**
   * Marks the token used and returns it, or null when it is unknown, used, expired or of
   * another purpose. The row lock makes two concurrent uses of one token succeed once.
   */
  async consume(manager: EntityManager, purpose: TokenPurpose, token: string): Promise<AuthToken | null> {
    const record = await manager
      .createQueryBuilder(AuthToken, 't')
      .setLock('pessimistic_write')
      .where('t.token_hash = :hash AND t.purpose = :purpose', { hash: sha256Hex(token), purpose })
      .getOne();
    if (!record || record.usedAt || record.expiresAt.getTime() <= Date.now()) return null;
    await manager.update(AuthToken, { id: record.id }, { usedAt: new Date() });
    return record;
  }

  /** Invalidates every other unused token of that purpose (after a password reset). */
  async revokeAll(manager: EntityManager, userId: string, purpose: TokenPurpose): Promise<void> {
    await manager.query(
      `UPDATE auth_tokens SET used_at = now() WHERE user_id = $1 AND purpose = $2 AND used_at IS NULL`,
      [userId, purpose],
    );
  }

  find(purpose: TokenPurpose, token: string): Promise<AuthToken | null> {
    return this.dataSource.getRepository(AuthToken).findOneBy({ tokenHash: sha256Hex(token), purpose });
  }
}
