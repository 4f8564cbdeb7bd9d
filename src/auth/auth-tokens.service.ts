import { Injectable } from '@nestjs/common';
import { randomSecret, sha256Hex } from '../common/crypto.js';
import { UnitOfWork } from '../database/unit-of-work.js';
import type { AuthToken, TokenPurpose } from './auth-token.entity.js';
import { AuthTokensRepository } from './auth-tokens.repository.js';

export const TOKEN_TTL_MS: Record<TokenPurpose, number> = {
  verify_email: 24 * 60 * 60 * 1000,
  reset_password: 60 * 60 * 1000,
  email_change: 60 * 60 * 1000,
};

/** At most this many unused, unexpired tokens per account and purpose. */
export const MAX_ACTIVE_TOKENS = 3;

/**
 * Mailed one-time tokens: only their hashes are stored; each works once, before it expires.
 * Every method runs in the caller's unit of work.
 */
@Injectable()
export class AuthTokensService {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly tokens: AuthTokensRepository,
  ) {}

  async issue(userId: string, purpose: TokenPurpose, newEmail: string | null = null): Promise<string> {
    const token = randomSecret(32);
    await this.tokens.insert({
      userId,
      purpose,
      tokenHash: sha256Hex(token),
      newEmail,
      expiresAt: new Date(Date.now() + TOKEN_TTL_MS[purpose]),
    });
    return token;
  }

  activeCount(userId: string, purpose: TokenPurpose): Promise<number> {
    return this.tokens.activeCount(userId, purpose);
  }

  /** Seconds until the oldest active token of the purpose expires, freeing a slot. */
  secondsUntilOneFrees(userId: string, purpose: TokenPurpose): Promise<number> {
    return this.tokens.secondsUntilOneFrees(userId, purpose);
  }

  /**
   * Marks the token used and returns it, or null when it is unknown, used, expired or of
   * another purpose. The row lock makes two concurrent uses of one token succeed once.
   */
  consume(purpose: TokenPurpose, token: string): Promise<AuthToken | null> {
    return this.uow.run(async () => {
      const record = await this.tokens.findLocked(sha256Hex(token), purpose);
      if (!record || record.usedAt || record.expiresAt.getTime() <= Date.now()) return null;
      await this.tokens.markUsed(record.id);
      return record;
    });
  }

  /** Invalidates every other unused token of that purpose (after a password reset). */
  revokeAll(userId: string, purpose: TokenPurpose): Promise<void> {
    return this.tokens.markAllUsed(userId, purpose);
  }
}
