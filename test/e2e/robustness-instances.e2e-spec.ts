// Three instances of the service on one database (and one Redis, when a Redis answers), as behind
// a load balancer: they behave as one service.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { WebhookDispatcher } from '../../src/webhooks/webhook-dispatcher.js';
import { WebhookOutboxRepository } from '../../src/webhooks/webhook-outbox.repository.js';
import { createOrg, createUser, randomClientIp } from '../factories/identity.js';
import { startTestApp, type TestApp } from '../harness/test-app.js';
import { signInCookie } from '../support/caller-world.js';
import { listen, type ProbeClient } from '../support/probe-client.js';
import { attestDevice, fabricatedRootEnv, registerApp, TEAM_ID, type RegisteredApp } from '../support/sdk-client.js';
import { eventually, sleep, startWebhookReceiver } from '../support/webhook-receiver.js';
import { LOCAL_REDIS_URL, redisAnswers } from '../support/redis.js';
import { UnitOfWork } from '../../src/database/unit-of-work.js';
import { trustOrganizationId } from '../../src/common/access/tenant-id.js';

const REDIS_URL = LOCAL_REDIS_URL;

const redisUp = await redisAnswers(REDIS_URL);

interface EventStream {
  /** The `data:` of each `snapshot` event. */
  readonly events: string[];
  /** The `data:` of each `revoked` event. */
  readonly revoked: string[];
  /** Whether the server ended the stream. */
  ended(): boolean;
  stop(): void;
}

/** Reads an open event stream as it arrives. */
function readEvents(response: Response): EventStream {
  const events: string[] = [];
  const revoked: string[] = [];
  let ended = false;
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  void (async () => {
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) {
          ended = true;
          return;
        }
        buffer += decoder.decode(value, { stream: true });
        const blocks = buffer.split('\n\n');
        buffer = blocks.pop() ?? '';
        for (const block of blocks) {
          const data = /^event: (snapshot|revoked)\ndata: (.*)$/m.exec(block);
          if (data) (data[1] === 'snapshot' ? events : revoked).push(data[2]);
        }
      }
    } catch {
      // the stream was stopped
    }
  })();
  return { events, revoked, ended: () => ended, stop: () => void reader.cancel().catch(() => undefined) };
}

describe(`three instances on one database${redisUp ? ' and one Redis' : ' (no Redis answered: in-process limiter)'}`, () => {
  let instances: TestApp[];
  let clients: ProbeClient[];

  beforeAll(async () => {
    const first = await startTestApp({ ...(await fabricatedRootEnv()), ...(redisUp ? { REDIS_URL } : {}) });
    instances = [first, await first.startPeer(), await first.startPeer()];
    clients = await Promise.all(instances.map(listen));
  });
  afterAll(async () => {
    await Promise.all(clients.map((client) => client.close()));
    await instances[0].close();
  });

  it('shares sessions: signed in on one, recognized on the others, signed out everywhere at once', async () => {
    const [a, b, c] = clients;
    const org = await createOrg(instances[0]);
    const user = await createUser(instances[0], { org, role: 'admin' });
    const cookie = await signInCookie(a, user.email);
    for (const client of clients) {
      const me = await client.send('get', '/api/v1/auth/me', { headers: { cookie } });
      expect(me.status).toBe(200);
      expect(me.body).toMatchObject({ user: { email: user.email }, organization: { id: org.id } });
    }
    // Clearing the organization on one instance is seen by the next request on another.
    expect((await b.send('post', '/api/v1/auth/clear-org', { headers: { cookie } })).status).toBe(200);
    expect((await c.send('get', '/api/v1/org/settings', { headers: { cookie } })).status).toBe(403);
    expect(
      (await c.send('post', '/api/v1/auth/switch-org', { headers: { cookie }, body: { slug: org.slug } })).status,
    ).toBe(200);
    expect((await a.send('get', '/api/v1/org/settings', { headers: { cookie } })).status).toBe(200);
    expect((await c.send('post', '/api/v1/auth/logout', { headers: { cookie } })).status).toBe(204);
    for (const client of clients) {
      expect((await client.send('get', '/api/v1/auth/me', { headers: { cookie } })).status).toBe(401);
    }
  });

  (redisUp ? it : it.skip)(
    redisUp
      ? 'shares rate limits through Redis: the tier budget of an organization and the failed sign-ins of a client address'
      : `shares rate limits through Redis — SKIPPED: no Redis answered at ${REDIS_URL}`,
    async () => {
      const app = await registerApp(instances[0], 'free');
      const tenant = { 'x-bundle-id': app.bundleId, 'x-team-id': TEAM_ID };
      // Free: 60 challenges a minute for the organization, whichever instance answers.
      for (let i = 0; i < 60; i++) {
        const response = await clients[i % 3].send('get', '/api/v1/attestation/challenge', { headers: tenant });
        expect(`${i}: ${response.status}`).toBe(`${i}: 200`);
      }
      for (const client of clients) {
        const refused = await client.send('get', '/api/v1/attestation/challenge', { headers: tenant });
        expect(refused.status).toBe(429);
        expect(refused.headers.get('retry-after')).toMatch(/^\d+$/);
      }
      // Sign-in: 30 failures per client address in 15 minutes, counted across instances.
      const ip = randomClientIp();
      const attempt = (client: ProbeClient) =>
        client.send('post', '/api/v1/auth/login', {
          headers: { 'x-forwarded-for': ip },
          body: { email: `nobody-${randomUUID()}@example.com`, password: 'wrong-password' },
        });
      for (let i = 0; i < 30; i++) expect((await attempt(clients[i % 3])).status).toBe(401);
      for (const client of clients) expect((await attempt(client)).status).toBe(429);
    },
  );

  it('delivers each webhook event exactly once while every instance sweeps', async () => {
    const receiver = await startWebhookReceiver();
    try {
      const org = await createOrg(instances[0], { tier: 'professional' });
      const cookie = await signInCookie(clients[0], (await createUser(instances[0], { org })).email);
      const endpoint = await clients[1].send('post', '/api/v1/org/webhooks', {
        headers: { cookie },
        body: { url: receiver.url, events: ['flag.created'] },
      });
      expect(endpoint.status).toBe(201);
      const outbox = instances[0].app.get(WebhookOutboxRepository);
      for (let i = 0; i < 30; i++) {
        await instances[0].app.get(UnitOfWork).run(() =>
          outbox.enqueue(trustOrganizationId(org.id), 'flag.created', {
            flag_id: `f${i}`,
            flag_key: `k${i}`,
            app_id: 'a',
          }),
        );
      }
      // The scheduled sweeps run every second on all three; these make them collide on purpose.
      const dispatchers = instances.map((instance) => instance.app.get(WebhookDispatcher));
      await eventually(() => receiver.received.length >= 30, {
        step: () => Promise.all(dispatchers.map((dispatcher) => dispatcher.sweep())),
        timeoutMs: 20_000,
      });
      await sleep(1_500);
      await Promise.all(dispatchers.map((dispatcher) => dispatcher.sweep()));
      const ids = receiver.received.map((request) => request.deliveryId);
      expect(ids).toHaveLength(30);
      expect(new Set(ids).size).toBe(30);
      const rows = await instances[2].sql<{ status: string; attempt_count: number; n: number }>(
        `SELECT status, attempt_count, count(*)::int AS n FROM webhook_deliveries WHERE endpoint_id = $1
          GROUP BY status, attempt_count`,
        [endpoint.body!.id],
      );
      expect(rows).toEqual([{ status: 'succeeded', attempt_count: 1, n: 30 }]);
    } finally {
      await receiver.close();
    }
  });

  it('fans a flag change out to the event streams of every instance within a second', async () => {
    const app = await registerApp(instances[0], 'professional');
    const { token } = await attestDevice(instances[0], app);
    const flag = await app.owner
      .post(`/api/v1/dashboard/apps/${app.id}/flags`)
      .send({ key: 'fan_out', name: 'Fan out', valueType: 'boolean', defaultValue: 'false' })
      .expect(201);
    const headers = { 'x-bundle-id': app.bundleId, 'x-team-id': TEAM_ID, authorization: `Bearer ${token}` };
    const streams = await Promise.all(
      clients.map(async (client) => readEvents(await fetch(`${client.baseUrl}/api/v1/flags/stream`, { headers }))),
    );
    try {
      await eventually(() => streams.every((stream) => stream.events.length === 1), { timeoutMs: 5_000 });
      const owner = await signInCookie(
        clients[2],
        (
          await instances[0].sql<{ email: string }>(
            `SELECT u.email FROM users u JOIN memberships m ON m.user_id = u.id WHERE m.organization_id = $1`,
            [app.org.id],
          )
        )[0].email,
      );
      const changed = Date.now();
      const put = await clients[2].send('put', `/api/v1/dashboard/flags/${flag.body.id}/environments/production`, {
        headers: { cookie: owner },
        body: { enabled: true, value: 'true', rules: [] },
      });
      expect(put.status).toBe(200);
      await eventually(() => streams.every((stream) => stream.events.length === 2), {
        timeoutMs: 3_000,
        intervalMs: 10,
      });
      expect(Date.now() - changed).toBeLessThan(1_000);
      for (const stream of streams) expect(JSON.parse(stream.events[1])).toEqual({ flags: { fan_out: true } });
    } finally {
      for (const stream of streams) stream.stop();
    }
  });

  describe('revocation reaches device tokens on every instance', () => {
    /** An SDK whose device token works on every instance (each has cached the app) and streams on one. */
    async function deviceEverywhere(app: RegisteredApp) {
      const { device, token } = await attestDevice(instances[0], app);
      const flag = await app.owner
        .post(`/api/v1/dashboard/apps/${app.id}/flags`)
        .send({
          key: `revocable_${randomUUID().slice(0, 8)}`,
          name: 'Revocable',
          valueType: 'boolean',
          defaultValue: 'true',
        })
        .expect(201);
      const headers = { 'x-bundle-id': app.bundleId, 'x-team-id': TEAM_ID, authorization: `Bearer ${token}` };
      const statuses = async () =>
        Promise.all(
          clients.flatMap((client) => [
            client.send('get', '/api/v1/flags', { headers }).then((response) => response.status),
            client
              .send('post', `/api/v1/flags/${flag.body.id}/evaluate`, { headers, body: {} })
              .then((response) => response.status),
          ]),
        );
      expect(await statuses()).toEqual([200, 200, 200, 200, 200, 200]);
      const streams = await Promise.all(
        clients.map(async (client) => readEvents(await fetch(`${client.baseUrl}/api/v1/flags/stream`, { headers }))),
      );
      await eventually(() => streams.every((stream) => stream.events.length === 1), { timeoutMs: 5_000 });
      return { device, statuses, streams, headers };
    }

    /** Well inside the 5 s reread of blocks and the 30 s tenant cache: only the notification is this quick. */
    const quickly = { timeoutMs: 3_000, intervalMs: 50 };

    it('a device blocked on one instance: its token is refused on all three and its open streams end', async () => {
      const app = await registerApp(instances[0], 'professional');
      const { device, statuses, streams } = await deviceEverywhere(app);
      const other = await deviceEverywhere(app);
      try {
        const path = `/api/v1/devices/${encodeURIComponent(device.keyId)}`;
        await app.owner.post(`${path}/block`).send({ reason: 'fraud' }).expect(200);
        await eventually(async () => (await statuses()).every((status) => status === 401), quickly);
        await eventually(() => streams.every((stream) => stream.ended()), quickly);
        for (const stream of streams) expect(stream.revoked).toEqual([JSON.stringify({ reason: 'device_blocked' })]);
        // Another device of the app keeps its token and its streams.
        expect(await other.statuses()).toEqual([200, 200, 200, 200, 200, 200]);
        expect(other.streams.some((stream) => stream.ended())).toBe(false);

        await app.owner.post(`${path}/unblock`).send({}).expect(200);
        await eventually(async () => (await statuses()).every((status) => status === 200), quickly);
      } finally {
        for (const stream of [...streams, ...other.streams]) stream.stop();
      }
    });

    it('an app deactivated on one instance: its tokens are refused on all three and its streams end, until reactivated', async () => {
      const primary = await registerApp(instances[0], 'professional');
      const created = await primary.owner
        .post('/api/v1/apps')
        .send({ appName: 'Second', bundleId: `${primary.bundleId}.second`, teamId: TEAM_ID })
        .expect(201);
      const app: RegisteredApp = { ...primary, id: created.body.id, bundleId: `${primary.bundleId}.second` };
      const { statuses, streams } = await deviceEverywhere(app);
      try {
        await app.owner.post(`/api/v1/apps/${app.id}/deactivate`).expect(200);
        await eventually(async () => (await statuses()).every((status) => status === 403), quickly);
        await eventually(() => streams.every((stream) => stream.ended()), quickly);
        for (const stream of streams) expect(stream.revoked).toEqual([JSON.stringify({ reason: 'app_inactive' })]);

        await app.owner.post(`/api/v1/apps/${app.id}/activate`).expect(200);
        await eventually(async () => (await statuses()).every((status) => status === 200), quickly);
      } finally {
        for (const stream of streams) stream.stop();
      }
    });

    it('an app deleted on one instance: its tokens are refused on all three and its streams end', async () => {
      const app = await registerApp(instances[0], 'professional');
      await app.owner
        .post('/api/v1/apps')
        .send({ appName: 'Successor', bundleId: `${app.bundleId}.successor`, teamId: TEAM_ID })
        .expect(201);
      const { statuses, streams } = await deviceEverywhere(app);
      try {
        await app.owner.delete(`/api/v1/apps/${app.id}`).expect(204);
        await eventually(async () => (await statuses()).every((status) => status === 404), quickly);
        await eventually(() => streams.every((stream) => stream.ended()), quickly);
        for (const stream of streams) expect(stream.revoked).toEqual([JSON.stringify({ reason: 'app_deleted' })]);
      } finally {
        for (const stream of streams) stream.stop();
      }
    });

    it('an organization deleted on one instance: the tokens of all its apps are refused on all three and their streams end', async () => {
      const app = await registerApp(instances[0], 'professional');
      const { statuses, streams } = await deviceEverywhere(app);
      try {
        await app.owner.delete('/api/v1/org').expect(204);
        await eventually(async () => (await statuses()).every((status) => status === 404), quickly);
        await eventually(() => streams.every((stream) => stream.ended()), quickly);
        for (const stream of streams) expect(stream.revoked).toEqual([JSON.stringify({ reason: 'app_deleted' })]);
      } finally {
        for (const stream of streams) stream.stop();
      }
    });
  });
});
