import { randomBytes } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { Interval } from '@nestjs/schedule';
import { DataSource, type EntityManager } from 'typeorm';
import { sha256Hex } from '../common/crypto.js';
import { AppException } from '../common/errors/app-exception.js';
import { queryRows } from '../database/sql.js';

export const CHALLENGE_TTL_MS = 5 * 60 * 1000;

/** Single-use challenges bound to one app, valid five minutes; only their hashes are stored. */
@Injectable()
export class ChallengeService {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async issue(appId: string): Promise<{ challenge: string; expiresAt: string }> {
    const challenge = randomBytes(32).toString('base64');
    const expiresAt = new Date(Date.now() + CHALLENGE_TTL_MS);
    await this.dataSource.query(
      `INSERT INTO attestation_challenges (challenge_hash, app_id, expires_at) VALUES ($1, $2, $3)`,
      [sha256Hex(challenge), appId, expiresAt],
    );
    return { challenge, expiresAt: expiresAt.toISOString() };
  }

  /** Uses the challenge up: deleting it is what makes a second use, even a concurrent one, fail. */
  async consume(appId: string, challenge: string, manager: EntityManager = this.dataSource.manager): Promise<void> {
    const rows = await queryRows<{ expires_at: Date }>(
      manager,
      `DELETE FROM attestation_challenges WHERE challenge_hash = $1 AND app_id = $2 RETURNING expires_at`,
      [sha256Hex(challenge), appId],
    );
    if (!rows.length) {
      throw new AppException(400, 'challenge_invalid', 'The challenge is unknown, already used, or for another app', {
        hint: 'Request a new challenge with GET /api/v1/attestation/challenge',
      });
    }
    if (rows[0].expires_at.getTime() <= Date.now()) {
      throw new AppException(400, 'challenge_expired', 'The challenge is older than 5 minutes', {
        hint: 'Request a new challenge with GET /api/v1/attestation/challenge',
      });
    }
  }

  /** Expired challenges are useless; deleting them is idempotent, so instances may overlap. */
  @Interval(60_000)
  async purgeExpired(): Promise<void> {
    await this.dataSource.query(`DELETE FROM attestation_challenges WHERE expires_at < now() - interval '1 minute'`);
  }
}
