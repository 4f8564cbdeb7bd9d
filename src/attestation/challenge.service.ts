import { Injectable } from '@nestjs/common';
import { Interval } from '@nestjs/schedule';
import type { AppId, OrganizationId } from '../common/access/tenant-id.js';
import type { ReadDeviceRow } from '../devices/devices.repository.js';
import { AdvisoryLocks } from '../database/advisory-lock.js';
import { deleteInBatches } from '../database/batches.js';
import { randomSecret, sha256Hex } from '../common/crypto.js';
import { challengeExpired, challengeInvalid } from './attestation.exceptions.js';
import { stampChallenge, stampedExpiry } from './challenge-stamp.js';
import { ChallengesRepository, type ChallengeUse } from './challenges.repository.js';

export const CHALLENGE_TTL_MS = 5 * 60 * 1000;
/**
 * How long past its expiry a challenge's row is kept. A challenge the service stamped
 * (challenge-stamp.ts) answers `challenge_expired` from its own bytes for ever after; the row only
 * answers it for challenges without a stamp (issued before stamps, or seeded by the benchmark).
 */
export const CHALLENGE_TOMBSTONE_MS = 24 * 60 * 60 * 1000;

/** Advisory lock key of the purge (arbitrary; unique among the service's locks). */
export const CHALLENGE_PURGE_LOCK = 727_105;
const PURGE_BATCH = 1_000;

/**
 * Single-use challenges bound to one app, valid five minutes; only their hashes are stored, and
 * each carries its expiry sealed for its app (decision 0063). Issuing and using one up commit
 * without waiting for the WAL flush (`RelaxedCommits`, decision 0062): a challenge lost in a crash
 * is asked for again, and a use lost in one is made durable by the flush of the attempt's own
 * admission or failure commit, which follows it in the WAL. The clock is replaceable so tests can
 * move time.
 */
@Injectable()
export class ChallengeService {
  now: () => number = Date.now;
  private stampKey: Promise<Buffer> | null = null;

  constructor(
    private readonly challenges: ChallengesRepository,
    private readonly locks: AdvisoryLocks,
  ) {}

  async issue(appId: AppId): Promise<{ challenge: string; expiresAt: string }> {
    const expiresAtS = Math.floor((this.now() + CHALLENGE_TTL_MS) / 1000);
    const challenge = stampChallenge(await this.key(), appId, expiresAtS);
    const expiresAt = new Date(expiresAtS * 1000);
    await this.challenges.insert(appId, sha256Hex(challenge), expiresAt);
    return { challenge, expiresAt: expiresAt.toISOString() };
  }

  /**
   * Uses the challenge up: deleting its row is what makes a second use, even a concurrent one,
   * fail. A challenge whose own stamp says it expired answers `challenge_expired` at once, used
   * or not, however long ago (its row, if still there, is the purge's). Otherwise the row decides:
   * an expired one stays a tombstone that answers `challenge_expired` until the purge; none at
   * all (used, never issued, another app's) is `challenge_invalid`.
   */
  async consume(appId: AppId, challenge: string): Promise<void> {
    const hash = await this.usable(appId, challenge);
    answer(await this.challenges.use(appId, hash.challengeHash, hash.now));
  }

  /**
   * `consume`, reading in the same statement the key's device in the app (null without one), as
   * `DevicesRepository.findByKey` reads it: a refresh spends its challenge and finds its key in one
   * round trip. The statement reads the device whatever the challenge's fate; it is returned only
   * for a challenge used now (an unusable one is refused first).
   */
  async consumeReadingKey(
    appId: AppId,
    challenge: string,
    key: { organizationId: OrganizationId; keyId: string },
  ): Promise<ReadDeviceRow | null> {
    const hash = await this.usable(appId, challenge);
    const outcome = await this.challenges.useReadingKey(appId, hash.challengeHash, hash.now, key);
    answer(outcome);
    return outcome.device;
  }

  /** Refuses at once a challenge whose own stamp says it expired; else what its use looks for. */
  private async usable(appId: AppId, challenge: string): Promise<{ challengeHash: string; now: Date }> {
    const now = this.now();
    const stamped = stampedExpiry(await this.key(), appId, challenge);
    if (stamped !== null && stamped * 1000 <= now) throw challengeExpired();
    return { challengeHash: sha256Hex(challenge), now: new Date(now) };
  }

  /**
   * Forgets challenges a day past their expiry (stamped ones still answer `challenge_expired`), in
   * batches of 1,000 that each commit on their own, so a backlog never becomes one long delete;
   * every minute, on one instance at a time. The rows deleted, or null when another instance is
   * running the purge. `now` is the job's clock.
   */
  @Interval(60_000)
  async purgeExpired(now: number = this.now()): Promise<number | null> {
    const before = new Date(now - CHALLENGE_TOMBSTONE_MS);
    const outcome = await this.locks.run(CHALLENGE_PURGE_LOCK, () =>
      deleteInBatches(PURGE_BATCH, (size) => this.challenges.deleteExpiredBefore(before, size)),
    );
    return outcome.ran ? outcome.result : null;
  }

  /** The key challenges are sealed with: one for every instance, generated once and kept in the database. */
  private key(): Promise<Buffer> {
    if (!this.stampKey) {
      const key = this.challenges.stampKey(() => randomSecret(32)).then((value) => Buffer.from(value, 'base64url'));
      // A failed read (database down) is retried by the next caller rather than remembered.
      void key.catch(() => {
        if (this.stampKey === key) this.stampKey = null;
      });
      this.stampKey = key;
    }
    return this.stampKey;
  }
}

/** Nothing for a challenge used now; otherwise the refusal its row (or its absence) says. */
function answer(outcome: ChallengeUse): void {
  if (outcome.used) return;
  if (outcome.expired) throw challengeExpired();
  throw challengeInvalid();
}
