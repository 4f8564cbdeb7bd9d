import { randomBytes } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { Interval } from '@nestjs/schedule';
import { DataSource } from 'typeorm';
import { sha256Hex } from '../common/crypto.js';
import { challengeExpired, challengeInvalid } from './attestation.exceptions.js';
import { RelaxedCommits } from '../database/relaxed-commits.js';

export const CHALLENGE_TTL_MS = 5 * 60 * 1000;
/** How long past its expiry a challenge is remembered, to answer `challenge_expired`. */
export const CHALLENGE_TOMBSTONE_MS = 24 * 60 * 60 * 1000;

/**
 * Single-use challenges bound to one app, valid five minutes; only their hashes are stored.
 * Issuing and using one up commit without waiting for the WAL flush (`RelaxedCommits`, decision
 * 0062): a challenge lost in a crash is asked for again, and a use lost in one is made durable by
 * the flush of the attempt's own admission or failure commit, which follows it in the WAL.
 */
@Injectable()
export class ChallengeService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly relaxed: RelaxedCommits,
  ) {}

  async issue(appId: string): Promise<{ challenge: string; expiresAt: string }> {
    const challenge = randomBytes(32).toString('base64');
    const expiresAt = new Date(Date.now() + CHALLENGE_TTL_MS);
    await this.relaxed.query(
      `INSERT INTO attestation_challenges (challenge_hash, app_id, expires_at) VALUES ($1, $2, $3)`,
      [sha256Hex(challenge), appId, expiresAt],
    );
    return { challenge, expiresAt: expiresAt.toISOString() };
  }

  /**
   * Uses the challenge up: deleting it is what makes a second use, even a concurrent one, fail.
   * An expired challenge is not deleted: it stays a tombstone that answers `challenge_expired` to
   * every use until the purge forgets it, a day after its expiry.
   */
  async consume(appId: string, challenge: string): Promise<void> {
    const [outcome] = await this.relaxed.query<{ used: boolean; expired: boolean }>(
      `WITH used AS (
         DELETE FROM attestation_challenges
          WHERE challenge_hash = $1 AND app_id = $2 AND expires_at > now() RETURNING 1)
       SELECT EXISTS (SELECT 1 FROM used) AS used,
              EXISTS (SELECT 1 FROM attestation_challenges
                       WHERE challenge_hash = $1 AND app_id = $2 AND expires_at <= now()) AS expired`,
      [sha256Hex(challenge), appId],
    );
    if (outcome.used) return;
    if (outcome.expired) {
      throw challengeExpired();
    }
    throw challengeInvalid();
  }

  /**
   * Forgets challenges a day past their expiry (until then they answer `challenge_expired`);
   * deleting is idempotent, so instances may overlap.
   */
  @Interval(60_000)
  async purgeExpired(): Promise<void> {
    await this.dataSource.query(
      `DELETE FROM attestation_challenges WHERE expires_at < now() - make_interval(secs => $1)`,
      [CHALLENGE_TOMBSTONE_MS / 1000],
    );
  }
}
