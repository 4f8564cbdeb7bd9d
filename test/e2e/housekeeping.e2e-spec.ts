import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ExpiredCredentialsJob } from '../../src/auth/expired-credentials.job.js';
import { orgWithMember } from '../factories/identity.js';
import { startTestApp, type TestApp } from '../harness/test-app.js';

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
