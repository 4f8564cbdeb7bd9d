import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { RateLimitService } from '../../src/rate-limit/rate-limit.service.js';
import { UsageCache } from '../../src/usage/usage-cache.js';
import { shiftByMonths } from '../../src/usage/billing-period.js';
import { createApiKey, orgWithMember, randomClientIp } from '../factories/identity.js';
import { sentMails, startTestApp, type TestApp } from '../harness/test-app.js';
import { attestDevice, fabricatedRootEnv, registerApp, sdk } from '../support/sdk-client.js';
import { LOCAL_REDIS_URL, redisAnswers } from '../support/redis.js';

const MINUTE = 60_000;

async function waitFor(condition: () => boolean, timeoutMs = 3000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('usage and quotas', () => {
  let t: TestApp;
  let rootEnv: Record<string, string>;
  beforeAll(async () => {
    rootEnv = await fabricatedRootEnv();
    t = await startTestApp(rootEnv);
  });
  afterAll(async () => {
    await t.close();
  });

  it('answers the canonical shape on Free for the UTC calendar month', async () => {
    const app = await registerApp(t, 'free');
    await attestDevice(t, app);
    const response = await app.owner.get('/api/v1/tenants/me/usage').expect(200);
    const now = new Date();
    const start = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
    const end = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1));
    expect(response.body).toEqual({
      currentMAD: 1,
      tierLimit: 1000,
      tierName: 'free',
      billingPeriodStart: start.toISOString(),
      billingPeriodEnd: end.toISOString(),
      usagePercent: 0.1,
      daysUntilReset: Math.ceil((end.getTime() - Date.now()) / 86_400_000),
      resetDate: end.toISOString().slice(0, 10),
    });
  });

  it('answers nulls for Enterprise', async () => {
    const { agent } = await orgWithMember(t, { tier: 'enterprise' });
    const response = await agent.get('/api/v1/tenants/me/usage').expect(200);
    expect(response.body).toMatchObject({
      tierLimit: null,
      tierName: 'enterprise',
      usagePercent: null,
      daysUntilReset: null,
      resetDate: null,
    });
    const legacy = await agent.get('/api/v1/tenant/usage').expect(200);
    expect(legacy.body).toMatchObject({
      attestationsLimit: null,
      usagePercent: null,
      tier: 'enterprise',
      nextTier: null,
      nextTierLimit: null,
      nextTierPrice: null,
    });
  });

  it('answers the legacy names, with the next plan and its price', async () => {
    const { agent } = await orgWithMember(t, { tier: 'free' });
    const response = await agent.get('/api/v1/tenant/usage').expect(200);
    expect(response.body).toEqual({
      attestationsUsed: 0,
      attestationsLimit: 1000,
      usagePercent: 0,
      tier: 'free',
      nextTier: 'pro',
      nextTierLimit: 25000,
      nextTierPrice: '$49/month',
      cycleEndsAt: expect.any(String),
    });
  });

  it('follows the payment provider cycle on a paid plan', async () => {
    const { org, agent } = await orgWithMember(t, { tier: 'basic' });
    const end = new Date(Date.now() + 10 * 86_400_000);
    await t.sql(`UPDATE organizations SET current_period_end = $2 WHERE id = $1`, [org.id, end]);
    const response = await agent.get('/api/v1/tenants/me/usage').expect(200);
    const start = shiftByMonths(end, -1);
    expect(response.body).toMatchObject({
      tierName: 'pro',
      tierLimit: 25000,
      billingPeriodStart: start.toISOString(),
      billingPeriodEnd: end.toISOString(),
      daysUntilReset: 10,
    });
  });

  it('serves /org/usage to members and to org:read keys only', async () => {
    const { org, agent } = await orgWithMember(t, { role: 'viewer' });
    await agent.get('/api/v1/org/usage').expect(200);
    const reader = await createApiKey(t, org, ['org:read']);
    expect(
      (await t.http().get('/api/v1/org/usage').set('Authorization', `Bearer ${reader}`).expect(200)).body.tierName,
    ).toBe('free');
    const wrongScope = await createApiKey(t, org, ['feedback:read']);
    await t.http().get('/api/v1/org/usage').set('Authorization', `Bearer ${wrongScope}`).expect(403);
    await t.http().get('/api/v1/org/usage').expect(401);
    await t.http().get('/api/v1/tenants/me/usage').set('Authorization', `Bearer ${reader}`).expect(401);
  });

  it('caches answers for five minutes per organization', async () => {
    const cache = t.app.get(UsageCache);
    const app = await registerApp(t, 'free');
    let now = Date.now();
    cache.now = () => now;
    try {
      expect((await app.owner.get('/api/v1/org/usage').expect(200)).body.currentMAD).toBe(0);
      await attestDevice(t, app);
      now += 4 * MINUTE;
      expect((await app.owner.get('/api/v1/org/usage').expect(200)).body.currentMAD).toBe(0);
      now += 61_000;
      expect((await app.owner.get('/api/v1/org/usage').expect(200)).body.currentMAD).toBe(1);
    } finally {
      cache.now = Date.now;
    }
  });

  it('mails Admins and Owners once at 80% when the preference is on, and not when it is off', async () => {
    const app = await registerApp(t, 'free');
    await attestDevice(t, app);
    await t.sql(`UPDATE mad_counters SET active_devices = 799 WHERE organization_id = $1`, [app.org.id]);
    await attestDevice(t, app);
    const [{ email }] = await t.sql<{ email: string }>(
      `SELECT u.email FROM users u JOIN memberships m ON m.user_id = u.id WHERE m.organization_id = $1`,
      [app.org.id],
    );
    await waitFor(() => sentMails(t, email).length === 1);
    expect(sentMails(t, email)[0].subject).toMatch(/80%/);
    await attestDevice(t, app);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(sentMails(t, email)).toHaveLength(1);

    const quiet = await registerApp(t, 'free');
    await quiet.owner.patch('/api/v1/org/notification-preferences').send({ usageAlert: false }).expect(200);
    await attestDevice(t, quiet);
    await t.sql(`UPDATE mad_counters SET active_devices = 999 WHERE organization_id = $1`, [quiet.org.id]);
    await attestDevice(t, quiet);
    const [{ email: quietEmail }] = await t.sql<{ email: string }>(
      `SELECT u.email FROM users u JOIN memberships m ON m.user_id = u.id WHERE m.organization_id = $1`,
      [quiet.org.id],
    );
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(sentMails(t, quietEmail)).toHaveLength(0);
    const [counter] = await t.sql<{ alerts_sent: string[] }>(
      `SELECT alerts_sent FROM mad_counters WHERE organization_id = $1`,
      [quiet.org.id],
    );
    expect(counter.alerts_sent).toEqual(['100']);
  });

  describe('request rate limits', () => {
    it('refuses the request past the tier limit with 429, headers and the seconds to wait', async () => {
      const app = await registerApp(t, 'free');
      const ip = randomClientIp();
      for (let i = 1; i <= 60; i++) {
        const ok = await sdk(t, app).get('/api/v1/attestation/challenge').set('X-Forwarded-For', ip).expect(200);
        expect(ok.headers['x-ratelimit-remaining']).toBe(String(60 - i));
      }
      const refused = await sdk(t, app).get('/api/v1/attestation/challenge').set('X-Forwarded-For', ip).expect(429);
      expect(refused.body).toMatchObject({
        code: 'rate_limited',
        error: expect.stringMatching(/Try again in \d+ seconds?/),
      });
      expect(refused.headers['x-ratelimit-limit']).toBe('60');
      expect(refused.headers['x-ratelimit-remaining']).toBe('0');
      expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect(Number(refused.headers['x-ratelimit-reset'])).toBeGreaterThan(Date.now() / 1000);
    });

    it('slides: requests come back one by one as the oldest leave the window', async () => {
      const limiter = t.app.get(RateLimitService);
      const app = await registerApp(t, 'free');
      // A client address of its own, so the per-IP limit (120/min) never decides here.
      const challenge = () => sdk(t, app).get('/api/v1/attestation/challenge').set('X-Forwarded-For', randomClientIp());
      let now = Date.now();
      limiter.clock = () => now;
      try {
        for (let i = 0; i < 30; i++) await challenge().expect(200);
        now += 30_000;
        for (let i = 0; i < 30; i++) await challenge().expect(200);
        await challenge().expect(429);
        // A fixed window would now grant all 60 again; the sliding window frees only the first 30.
        now += 30_001;
        for (let i = 0; i < 30; i++) await challenge().expect(200);
        await challenge().expect(429);
      } finally {
        limiter.clock = Date.now;
      }
    });
  });

  describe('several instances and Redis', () => {
    it('shares one budget between two instances through Redis', async () => {
      // Without a Redis server there is nothing to share; the fail-open test below still runs.
      if (!(await redisAnswers(LOCAL_REDIS_URL))) return;
      const shared = await startTestApp({ ...rootEnv, REDIS_URL: LOCAL_REDIS_URL });
      try {
        const peer = await shared.startPeer();
        const app = await registerApp(shared, 'free');
        for (let i = 0; i < 30; i++) await sdk(shared, app).get('/api/v1/attestation/challenge').expect(200);
        for (let i = 0; i < 30; i++) await sdk(peer, app).get('/api/v1/attestation/challenge').expect(200);
        await sdk(peer, app).get('/api/v1/attestation/challenge').expect(429);
        await sdk(shared, app).get('/api/v1/attestation/challenge').expect(429);
      } finally {
        await shared.close();
      }
    });

    it('lets requests through and still answers usage when Redis is unreachable', async () => {
      const unreachable = await startTestApp({ ...rootEnv, REDIS_URL: 'redis://127.0.0.1:1' });
      try {
        const app = await registerApp(unreachable, 'free');
        for (let i = 0; i < 65; i++) await sdk(unreachable, app).get('/api/v1/attestation/challenge').expect(200);
        expect((await app.owner.get('/api/v1/org/usage').expect(200)).body.tierName).toBe('free');
      } finally {
        await unreachable.close();
      }
    });
  });
});
