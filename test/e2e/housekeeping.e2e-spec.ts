import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ExpiredCredentialsJob } from '../../src/auth/expired-credentials.job.js';
import { CHALLENGE_PURGE_LOCK, ChallengeService } from '../../src/attestation/challenge.service.js';
import { DEBUG_TOKEN_RETENTION_LOCK, DebugTokenRetentionJob } from '../../src/attestation/debug-token-retention.job.js';
import { orgWithMember } from '../factories/identity.js';
import { startTestApp, type TestApp } from '../harness/test-app.js';
import { registerApp, sdk } from '../support/sdk-client.js';

const DAY = 86_400_000;
const sha256 = (value: string) => createHash('sha256').update(value).digest('hex');

describe('housekeeping: expired credentials', () => {
  let t: TestApp;
  let job: ExpiredCredentialsJob;

  beforeAll(async () => {
    t = await startTestApp();
    job = t.app.get(ExpiredCredentialsJob);
  });
  afterAll(async () => {
    await t.close();
  });

  async function count(table: string, where: string, params: unknown[]): Promise<number> {
    const [row] = await t.sql<{ n: number }>(`SELECT count(*)::int AS n FROM ${table} WHERE ${where}`, params);
    return row.n;
  }

  it('keeps live sessions, CLI logins and e-mail tokens, and deletes them once the clock passes their expiry', async () => {
    const { user, agent } = await orgWithMember(t);
    const cli = (await t.http().post('/api/v1/auth/cli/sessions').expect(201)).body.session_id as string;
    await t.sql(
      `INSERT INTO auth_tokens (user_id, purpose, token_hash, expires_at)
       VALUES ($1, 'reset_password', $2, now() + interval '1 hour')`,
      [user.id, sha256(`token-${user.id}`)],
    );
    const sessions = () => count('sessions', 'user_id = $1', [user.id]);
    const cliSessions = () => count('cli_sessions', 'id_hash = $1', [sha256(cli)]);
    const tokens = () => count('auth_tokens', 'user_id = $1', [user.id]);
    expect([await sessions(), await cliSessions(), await tokens()]).toEqual([1, 1, 1]);

    // Now: nothing of this user has expired, and the session still signs requests in.
    await job.run(new Date());
    expect([await sessions(), await cliSessions(), await tokens()]).toEqual([1, 1, 1]);
    await agent.get('/api/v1/auth/me').expect(200);

    // Two days on: the reset token (1 hour) is a day past expiry; the dashboard session (7 days)
    // lives on, and so does the expired CLI login, which polls as expired for 30 days.
    await job.run(new Date(Date.now() + 2 * DAY));
    expect([await sessions(), await cliSessions(), await tokens()]).toEqual([1, 1, 0]);

    // Eight days on the session is gone, and its cookie no longer signs anyone in.
    await job.run(new Date(Date.now() + 8 * DAY));
    expect(await sessions()).toBe(0);
    await agent.get('/api/v1/auth/me').expect(401);

    // Past its retention the CLI login goes too.
    await job.run(new Date(Date.now() + 31 * DAY));
    expect(await cliSessions()).toBe(0);
  });

  it('deletes in batches until nothing expired is left, and reports the counts', async () => {
    await t.sql(
      `INSERT INTO sessions (sid, data, expires_at)
       SELECT 'expired-' || g, '{}'::jsonb, now() - interval '1 minute' FROM generate_series(1, 2500) g`,
    );
    await t.sql(
      `INSERT INTO sessions (sid, data, expires_at) VALUES ('live-session', '{}'::jsonb, now() + interval '1 day')`,
    );
    const result = await job.run();
    expect(result?.sessions).toBeGreaterThanOrEqual(2500);
    expect(await count('sessions', `sid LIKE 'expired-%'`, [])).toBe(0);
    expect(await count('sessions', `sid = 'live-session'`, [])).toBe(1);
  });
});

describe('housekeeping: attestation records', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  const countWhere = async (sql: string, params: unknown[] = []) =>
    (await t.sql<{ n: number }>(`SELECT count(*)::int AS n FROM ${sql}`, params))[0].n;

  /** Runs `work` while a second connection holds `lockKey`, as another instance running the job would. */
  async function whileLocked<T>(lockKey: number, work: () => Promise<T>): Promise<T> {
    const runner = t.dataSource.createQueryRunner();
    await runner.connect();
    try {
      await runner.query('SELECT pg_advisory_lock($1)', [lockKey]);
      try {
        return await work();
      } finally {
        await runner.query('SELECT pg_advisory_unlock($1)', [lockKey]);
      }
    } finally {
      await runner.release();
    }
  }

  it('purges challenges a day past expiry in batches until none is left, keeps younger ones, and skips a round another instance runs', async () => {
    const app = await registerApp(t);
    await t.sql(
      `INSERT INTO attestation_challenges (challenge_hash, app_id, expires_at)
       SELECT 'old-' || g, $1, now() - interval '2 days' FROM generate_series(1, 2500) g`,
      [app.id],
    );
    await t.sql(
      `INSERT INTO attestation_challenges (challenge_hash, app_id, expires_at)
       VALUES ('tombstone', $1, now() - interval '1 hour'), ('live', $1, now() + interval '5 minutes')`,
      [app.id],
    );
    const purge = t.app.get(ChallengeService);
    const old = () => countWhere(`attestation_challenges WHERE challenge_hash LIKE 'old-%'`);

    // Another instance holds the purge's lock: this one skips the round and deletes nothing.
    expect(await whileLocked(CHALLENGE_PURGE_LOCK, () => purge.purgeExpired())).toBeNull();
    expect(await old()).toBe(2500);

    expect(await purge.purgeExpired()).toBeGreaterThanOrEqual(2500);
    expect(await old()).toBe(0);
    expect(
      await countWhere(`attestation_challenges WHERE challenge_hash IN ('tombstone', 'live') AND app_id = $1`, [
        app.id,
      ]),
    ).toBe(2);
  });

  it('deletes debug tokens 90 days after they were revoked or expired, never sooner, and their secret is then unknown', async () => {
    const app = await registerApp(t);
    const create = async (body: Record<string, unknown>) =>
      (await app.owner.post(`/api/v1/apps/${app.id}/debug-tokens`).send(body).expect(201)).body as {
        id: string;
        token: string;
      };
    const live = await create({ name: 'live' });
    const revoked = await create({ name: 'revoked' });
    const expired = await create({ name: 'expired' });
    await create({ name: 'expiring', expiresAt: new Date(Date.now() + 30 * DAY).toISOString() });
    await sdk(t, app).post('/api/v1/attestation/debug').send({ debugToken: revoked.token }).expect(200);
    await app.owner.delete(`/api/v1/apps/${app.id}/debug-tokens/${revoked.id}`).expect(204);
    await t.sql(`UPDATE debug_tokens SET expires_at = now() - interval '1 second' WHERE id = $1`, [expired.id]);
    const job = t.app.get(DebugTokenRetentionJob);
    const kept = async () =>
      (await t.sql<{ name: string }>(`SELECT name FROM debug_tokens WHERE app_id = $1 ORDER BY name`, [app.id])).map(
        (row) => row.name,
      );

    // Within the 31 days the deny set holds a revoked token, and long after, nothing is deleted.
    await job.run(new Date());
    await job.run(new Date(Date.now() + 31 * DAY));
    await job.run(new Date(Date.now() + 89 * DAY));
    expect(await kept()).toEqual(['expired', 'expiring', 'live', 'revoked']);
    const exchange = async (secret: string) =>
      (await sdk(t, app).post('/api/v1/attestation/debug').send({ debugToken: secret })).body.code as string;
    expect(await exchange(revoked.token)).toBe('debug_token_revoked');

    // Another instance holds the job's lock: this one skips the round.
    expect(await whileLocked(DEBUG_TOKEN_RETENTION_LOCK, () => job.run(new Date(Date.now() + 91 * DAY)))).toBeNull();
    expect(await kept()).toHaveLength(4);

    // 91 days on: the revoked and the expired token are gone; the one that expired 61 days before is kept.
    expect(await job.run(new Date(Date.now() + 91 * DAY))).toBeGreaterThanOrEqual(2);
    expect(await kept()).toEqual(['expiring', 'live']);
    expect(await exchange(revoked.token)).toBe('debug_token_invalid');
    expect(await exchange(expired.token)).toBe('debug_token_invalid');
    await sdk(t, app).post('/api/v1/attestation/debug').send({ debugToken: live.token }).expect(200);
  });
});
