import { Injectable } from '@nestjs/common';
import type { AppId } from '../common/access/tenant-id.js';
import { RelaxedCommits } from '../database/relaxed-commits.js';
import { preparedStatement, queryRows } from '../database/sql.js';
import { storedServiceSecret } from '../database/service-settings.js';
import { UnitOfWork } from '../database/unit-of-work.js';

const INSERT_CHALLENGE = preparedStatement(
  'challenges_insert',
  `INSERT INTO attestation_challenges (challenge_hash, app_id, expires_at) VALUES ($1, $2, $3)`,
);

const USE_CHALLENGE = preparedStatement(
  'challenges_use',
  `WITH used AS (
     DELETE FROM attestation_challenges
      WHERE challenge_hash = $1 AND app_id = $2 AND expires_at > $3 RETURNING 1)
   SELECT EXISTS (SELECT 1 FROM used) AS used,
          EXISTS (SELECT 1 FROM attestation_challenges
                   WHERE challenge_hash = $1 AND app_id = $2 AND expires_at <= $3) AS expired`,
);

/**
 * The owner of `attestation_challenges` (only the challenges' hashes are stored). Issuing and
 * using one up commit without waiting for the WAL flush (`RelaxedCommits`, decision 0062), each
 * one statement on the attestation's hot path.
 */
@Injectable()
export class ChallengesRepository {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly relaxed: RelaxedCommits,
  ) {}

  async insert(appId: AppId, challengeHash: string, expiresAt: Date): Promise<void> {
    await this.relaxed.query(INSERT_CHALLENGE, [challengeHash, appId, expiresAt]);
  }

  /**
   * Deletes the app's challenge if it is unexpired at `now` (`used`), and says whether an expired
   * one is still kept (`expired`): one statement, so a second use, even a concurrent one, fails.
   */
  async use(appId: AppId, challengeHash: string, now: Date): Promise<{ used: boolean; expired: boolean }> {
    const [outcome] = await this.relaxed.query<{ used: boolean; expired: boolean }>(USE_CHALLENGE, [
      challengeHash,
      appId,
      now,
    ]);
    return outcome;
  }

  /**
   * Forgets at most `batch` of every app's challenges that expired before `before` (the purge's
   * batch: one short statement of its own, found through the expiry index); how many it deleted.
   */
  async deleteExpiredBefore(before: Date, batch: number): Promise<number> {
    const rows = await queryRows<{ one: number }>(
      this.uow.manager(),
      `DELETE FROM attestation_challenges WHERE ctid = ANY(ARRAY(
         SELECT ctid FROM attestation_challenges WHERE expires_at < $1 LIMIT $2))
       RETURNING 1 AS one`,
      [before, batch],
    );
    return rows.length;
  }

  /** The key challenges are sealed with, generated once for every instance (base64url). */
  stampKey(generate: () => string): Promise<string> {
    return storedServiceSecret(this.uow.manager(), 'challenge_stamp_key', generate);
  }
}
