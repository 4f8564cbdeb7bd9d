import { Injectable } from '@nestjs/common';
import type { AppId, OrganizationId } from '../common/access/tenant-id.js';
import type { ReadDeviceRow } from '../devices/devices.repository.js';
import { RelaxedCommits } from '../database/relaxed-commits.js';
import { preparedStatement, queryRows } from '../database/sql.js';
import { storedServiceSecret } from '../database/service-settings.js';
import { UnitOfWork } from '../database/unit-of-work.js';

const INSERT_CHALLENGE = preparedStatement(
  'challenges_insert',
  `INSERT INTO attestation_challenges (challenge_hash, app_id, expires_at) VALUES ($1, $2, $3)`,
);

/**
 * Using a challenge up: deleting the app's challenge if unexpired at $3 (`used`), and whether an
 * expired one is still kept (`expired`).
 */
const USED_OR_EXPIRED = `WITH used AS (
     DELETE FROM attestation_challenges
      WHERE challenge_hash = $1 AND app_id = $2 AND expires_at > $3 RETURNING 1)
   SELECT EXISTS (SELECT 1 FROM used) AS used,
          EXISTS (SELECT 1 FROM attestation_challenges
                   WHERE challenge_hash = $1 AND app_id = $2 AND expires_at <= $3) AS expired`;

const USE_CHALLENGE = preparedStatement('challenges_use', USED_OR_EXPIRED);

/**
 * `USE_CHALLENGE`, and in the same statement the key's device as the devices feature reads it (its
 * SQL function `device_by_key`): a refresh spends its challenge and reads the key in one round trip.
 * The device's columns are null when the app has no such key.
 */
const USE_CHALLENGE_READING_KEY = preparedStatement(
  'challenges_use_reading_key',
  `${USED_OR_EXPIRED}, device.*
     FROM (SELECT 1) AS one LEFT JOIN device_by_key($4, $2, $5) AS device ON true`,
);

/** A row of a LEFT JOIN: every column may be null. */
type NullableColumns<T> = { [K in keyof T]: T[K] | null };

/** What using a challenge up says: whether it was used now, else whether it is known as expired. */
export interface ChallengeUse {
  used: boolean;
  expired: boolean;
}

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
  async use(appId: AppId, challengeHash: string, now: Date): Promise<ChallengeUse> {
    const [outcome] = await this.relaxed.query<ChallengeUse>(USE_CHALLENGE, [challengeHash, appId, now]);
    return outcome;
  }

  /**
   * `use`, and in the same statement the key's device in the app (null without one), read as
   * `DevicesRepository.findByKey` reads it.
   */
  async useReadingKey(
    appId: AppId,
    challengeHash: string,
    now: Date,
    key: { organizationId: OrganizationId; keyId: string },
  ): Promise<ChallengeUse & { device: ReadDeviceRow | null }> {
    const [row] = await this.relaxed.query<ChallengeUse & NullableColumns<Omit<ReadDeviceRow, 'inserted'>>>(
      USE_CHALLENGE_READING_KEY,
      [challengeHash, appId, now, key.organizationId, key.keyId],
    );
    const { used, expired, ...device } = row;
    // The LEFT JOIN's columns are all null when the app has no such key, and none is otherwise (`id`).
    if (device.id === null) return { used, expired, device: null };
    return { used, expired, device: { ...(device as Omit<ReadDeviceRow, 'inserted'>), inserted: false } };
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
