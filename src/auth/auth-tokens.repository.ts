import { Injectable } from '@nestjs/common';
import { queryRows } from '../database/sql.js';
import { UnitOfWork } from '../database/unit-of-work.js';
import { AuthToken, type TokenPurpose } from './auth-token.entity.js';

/** A token as stored: its hash, never the token itself. */
export interface NewAuthToken {
  userId: string;
  purpose: TokenPurpose;
  tokenHash: string;
  newEmail: string | null;
  expiresAt: Date;
}

/** The owner of `auth_tokens`, the mailed one-time tokens (decision 0070). */
@Injectable()
export class AuthTokensRepository {
  constructor(private readonly uow: UnitOfWork) {}

  async insert(token: NewAuthToken): Promise<void> {
    await this.uow
      .manager()
      .getRepository(AuthToken)
      .insert({ ...token, usedAt: null });
  }

  /** Unused, unexpired tokens of the user and purpose. */
  activeCount(userId: string, purpose: TokenPurpose): Promise<number> {
    return this.uow
      .manager()
      .getRepository(AuthToken)
      .createQueryBuilder('t')
      .where('t.user_id = :userId AND t.purpose = :purpose AND t.used_at IS NULL AND t.expires_at > now()', {
        userId,
        purpose,
      })
      .getCount();
  }

  /** Seconds until the oldest active token of the purpose expires (1 when none is active). */
  async secondsUntilOneFrees(userId: string, purpose: TokenPurpose): Promise<number> {
    const [row] = await queryRows<{ seconds: number | null }>(
      this.uow.manager(),
      `SELECT ceil(extract(epoch FROM min(expires_at) - now()))::int AS seconds FROM auth_tokens
        WHERE user_id = $1 AND purpose = $2 AND used_at IS NULL AND expires_at > now()`,
      [userId, purpose],
    );
    return row?.seconds ?? 1;
  }

  /** The token of that hash and purpose, its row locked until the unit of work ends. */
  findLocked(tokenHash: string, purpose: TokenPurpose): Promise<AuthToken | null> {
    return this.uow
      .manager()
      .getRepository(AuthToken)
      .createQueryBuilder('t')
      .setLock('pessimistic_write')
      .where('t.token_hash = :tokenHash AND t.purpose = :purpose', { tokenHash, purpose })
      .getOne();
  }

  async markUsed(id: string): Promise<void> {
    await this.uow.manager().getRepository(AuthToken).update({ id }, { usedAt: new Date() });
  }

  /** Marks every unused token of the user and purpose used. */
  async markAllUsed(userId: string, purpose: TokenPurpose): Promise<void> {
    await this.uow
      .manager()
      .query(`UPDATE auth_tokens SET used_at = now() WHERE user_id = $1 AND purpose = $2 AND used_at IS NULL`, [
        userId,
        purpose,
      ]);
  }
}
