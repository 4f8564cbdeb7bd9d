// Faults of what the service depends on: PostgreSQL going away during traffic, Redis down or
// hung, and webhook receivers that are down, slow or answer garbage. The service answers every
// request (an error envelope when it cannot do better), never hangs or crashes, and recovers
// without a restart.
import { createServer as createTcpServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { SchedulerRegistry } from '@nestjs/schedule';
import {
  DEFAULT_DELIVERY_SETTINGS,
  WebhookDispatcher,
  type WebhookDeliverySettings,
} from '../../src/webhooks/webhook-dispatcher.js';
import { WebhookOutboxRepository } from '../../src/webhooks/webhook-outbox.repository.js';
import { adminQuery, harnessDatabase } from '../harness/database.js';
import { createOrg, createUser, orgWithMember } from '../factories/identity.js';
import { startTestApp, type TestApp } from '../harness/test-app.js';
import { signInCookie } from '../support/caller-world.js';
import { envelopeProblem, listen, type ProbeClient, type ProbeResponse } from '../support/probe-client.js';
import { fabricatedRootEnv, registerApp, TEAM_ID } from '../support/sdk-client.js';
import { eventually, sleep, startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';
import { UnitOfWork } from '../../src/database/unit-of-work.js';
import { trustOrganizationId } from '../../src/common/access/tenant-id.js';

/** A TCP server that accepts connections and then does what `onConnection` says (or nothing at all). */
async function tcpServer(
  onConnection: (socket: Socket) => void = () => undefined,
): Promise<{ port: number; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createTcpServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.on('close', () => sockets.delete(socket));
    onConnection(socket);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

describe('faults: PostgreSQL unavailable during traffic', () => {
  let t: TestApp;
  let client: ProbeClient;
  beforeAll(async () => {
    t = await startTestApp(await fabricatedRootEnv());
    client = await listen(t);
  });
  afterAll(async () => {
    await client.close();
    await t.close();
  });

  it('fails requests cleanly with a 5xx envelope, reports degraded, then ok, and recovers without a restart', async () => {
    const app = await registerApp(t, 'enterprise');
    const org = await createOrg(t);
    const cookie = await signInCookie(client, (await createUser(t, { org })).email);
    const database = new URL(t.config.databaseUrl).pathname.slice(1);
    const { adminUrl } = harnessDatabase();
    const tenant = { 'x-bundle-id': app.bundleId, 'x-team-id': TEAM_ID };
    const traffic: { path: string; headers: Record<string, string> }[] = [
      { path: '/api/v1/health', headers: {} },
      { path: '/api/v1/org/settings', headers: { cookie } },
      { path: '/api/v1/apps', headers: { cookie } },
      { path: '/api/v1/attestation/challenge', headers: tenant },
      { path: '/health', headers: {} },
    ];

    const responses: { phase: string; path: string; response?: ProbeResponse; error?: string }[] = [];
    let phase = 'before';
    let stopped = false;
    const worker = async (offset: number) => {
      for (let i = offset; !stopped; i++) {
        const { path, headers } = traffic[i % traffic.length];
        const at = phase;
        try {
          responses.push({ phase: at, path, response: await client.send('get', path, { headers, timeoutMs: 8_000 }) });
        } catch (error) {
          responses.push({ phase: at, path, error: String(error) });
        }
      }
    };
    const workers = [0, 1, 2, 3].map(worker);
    await sleep(300);

    // The outage: the database refuses new connections and every open one is killed, repeatedly.
    phase = 'outage';
    await adminQuery(adminUrl, `ALTER DATABASE "${database}" WITH ALLOW_CONNECTIONS false`);
    const healthDuringOutage: string[] = [];
    const outageEnds = Date.now() + 1_000;
    while (Date.now() < outageEnds) {
      await adminQuery(
        adminUrl,
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '${database}' AND pid <> pg_backend_pid()`,
      );
      const health = await client.send('get', '/api/v1/health', { timeoutMs: 8_000 });
      healthDuringOutage.push(String(health.body?.status));
      await sleep(100);
    }
    await adminQuery(adminUrl, `ALTER DATABASE "${database}" WITH ALLOW_CONNECTIONS true`);
    phase = 'after';

    // Recovery: health says ok again, without any restart.
    const recovered = Date.now();
    await eventually(async () => (await client.send('get', '/api/v1/health')).body?.status === 'ok', {
      timeoutMs: 10_000,
      intervalMs: 100,
    });
    await sleep(500);
    stopped = true;
    await Promise.all(workers);

    expect(healthDuringOutage).toContain('degraded');
    expect(Date.now() - recovered).toBeLessThan(10_000);
    const hung = responses.filter((entry) => entry.error);
    expect(hung).toEqual([]);
    const unclean = responses
      .filter((entry) => entry.response!.status >= 500)
      .map((entry) => [entry.path, entry.response!.status, envelopeProblem(entry.response!)] as const)
      .filter(([, , problem]) => problem !== null);
    expect(unclean).toEqual([]);
    // The outage was real for the routes that need the database...
    expect(responses.some((entry) => entry.phase === 'outage' && entry.response!.status >= 500)).toBe(true);
    // ...while liveness never depended on it.
    expect(responses.filter((entry) => entry.path === '/health').every((entry) => entry.response!.status === 200)).toBe(
      true,
    );
    // Everything works again: sessions, tenant lookups and writes.
    expect((await client.send('get', '/api/v1/org/settings', { headers: { cookie } })).status).toBe(200);
    const renamed = await client.send('put', '/api/v1/org/settings', {
      headers: { cookie },
      body: { name: 'After the outage' },
    });
    expect(renamed.status).toBe(200);
    expect((await client.send('get', '/api/v1/attestation/challenge', { headers: tenant })).status).toBe(200);
    expect((await client.send('get', '/api/v1/health/status')).status).toBe(200);
  });
});

describe('faults: Redis stopped or hung', () => {
  const servers: { close(): Promise<void> }[] = [];
  afterAll(async () => {
    for (const server of servers) await server.close();
  });

  for (const kind of ['refusing connections', 'accepting connections but never answering'] as const) {
    it(`fails open and still answers usage when Redis is ${kind}`, async () => {
      let url = 'redis://127.0.0.1:1';
      if (kind !== 'refusing connections') {
        const silent = await tcpServer();
        servers.push(silent);
        url = `redis://127.0.0.1:${silent.port}`;
      }
      const t = await startTestApp({ ...(await fabricatedRootEnv()), REDIS_URL: url });
      try {
        const app = await registerApp(t, 'free');
        const started = Date.now();
        // Free allows 60 challenges a minute; with its backend away, the limiter lets all through.
        for (let i = 0; i < 65; i++) {
          await t
            .http()
            .get('/api/v1/attestation/challenge')
            .set('X-Bundle-ID', app.bundleId)
            .set('X-Team-ID', TEAM_ID)
            .expect(200);
        }
        expect((await app.owner.get('/api/v1/org/usage').expect(200)).body.tierName).toBe('free');
        expect((await app.owner.get('/api/v1/tenants/me/usage').expect(200)).body.currentMAD).toBe(0);
        // A hung Redis costs each request at most its command timeout.
        expect(Date.now() - started).toBeLessThan(65 * 300);
      } finally {
        await t.close();
      }
    });
  }
});

describe('faults: webhook receivers that are down, slow or answer garbage', () => {
  let t: TestApp;
  let dispatcher: WebhookDispatcher;
  const closers: { close(): Promise<void> }[] = [];
  beforeAll(async () => {
    WebhookDispatcher.settings = {
      ...DEFAULT_DELIVERY_SETTINGS,
      retry: { baseDelayMs: 50, factor: 1 },
      timeoutMs: 500,
      leaseMs: 2_000,
    };
    t = await startTestApp();
    t.app.get(SchedulerRegistry).deleteInterval('webhook-sweep');
    dispatcher = t.app.get(WebhookDispatcher);
  });
  afterEach(async () => {
    for (const closer of closers.splice(0)) await closer.close();
  });
  afterAll(async () => {
    WebhookDispatcher.settings = { ...DEFAULT_DELIVERY_SETTINGS };
    await t.close();
  });

  const raw = (reply: string | Buffer) => (socket: Socket) =>
    socket.once('data', () => {
      socket.end(reply);
    });

  const receivers: {
    name: string;
    start(): Promise<{ url: string; close(): Promise<void> }>;
    succeeds: boolean;
    /** Delivery settings for this receiver only, over the describe's (a 500 ms timeout). */
    settings?: Partial<WebhookDeliverySettings>;
  }[] = [
    {
      name: 'down (connection refused)',
      succeeds: false,
      start: async () => {
        const server = await tcpServer();
        await server.close();
        return { url: `http://127.0.0.1:${server.port}/hook`, close: () => Promise.resolve() };
      },
    },
    {
      name: 'slow (answers after the timeout)',
      succeeds: false,
      start: async () => {
        const receiver: WebhookReceiver = await startWebhookReceiver(() => 'hang');
        return receiver;
      },
    },
    {
      name: 'answering 200 with NUL bytes and invalid UTF-8 in the body',
      succeeds: true,
      start: async () => {
        const body = Buffer.concat([
          Buffer.from('ok\u0000\u0000'),
          Buffer.from([0xff, 0xfe, 0xc3, 0x28]),
          Buffer.from('\u0000end'),
        ]);
        const server = await tcpServer(
          raw(
            Buffer.concat([
              Buffer.from(`HTTP/1.1 200 OK\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n`),
              body,
            ]),
          ),
        );
        return { url: `http://127.0.0.1:${server.port}/hook`, close: () => server.close() };
      },
    },
    {
      name: 'answering 500 with a NUL byte in the body',
      succeeds: false,
      start: async () => {
        const receiver = await startWebhookReceiver(() => ({ status: 500, body: 'broken\u0000receiver' }));
        return receiver;
      },
    },
    {
      name: 'answering something that is not HTTP',
      succeeds: false,
      start: async () => {
        const server = await tcpServer(raw('SSH-2.0-OpenSSH_9.6\r\n\u0000\u0001\u0002garbage'));
        return { url: `http://127.0.0.1:${server.port}/hook`, close: () => server.close() };
      },
    },
    {
      name: 'closing the connection in the middle of the response',
      succeeds: false,
      start: async () => {
        const server = await tcpServer(raw('HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\npartial'));
        return { url: `http://127.0.0.1:${server.port}/hook`, close: () => server.close() };
      },
    },
    {
      name: 'answering a 10 MB body',
      succeeds: true,
      // What this proves is that a huge body is cut to the recorded 1000 characters and the
      // delivery counts as one success. The receiver runs in this test's process, so on a loaded
      // machine writing 10 MB could outlast the describe's 500 ms timeout and turn the first attempt
      // into a timeout (the slow receiver above is the timeout's test). Here the timeout and the
      // lease are far above any scheduling delay, so the one attempt is the one that succeeds.
      settings: { timeoutMs: 10_000, leaseMs: 20_000 },
      start: async () => {
        const body = 'x'.repeat(10 * 1024 * 1024);
        const receiver = await startWebhookReceiver(() => ({ status: 200, body }));
        return receiver;
      },
    },
  ];

  it.each(receivers.map((receiver) => [receiver.name, receiver] as const))(
    'records the outcome of every attempt to a receiver %s (three failures at most) and keeps serving',
    async (_name, spec) => {
      const describeSettings = WebhookDispatcher.settings;
      WebhookDispatcher.settings = { ...describeSettings, ...spec.settings };
      closers.push({
        close: () => {
          WebhookDispatcher.settings = describeSettings;
          return Promise.resolve();
        },
      });
      const target = await spec.start();
      closers.push(target);
      const { org, agent } = await orgWithMember(t, { tier: 'professional' });
      const created = await agent
        .post('/api/v1/org/webhooks')
        .send({ url: target.url, events: ['flag.created'] })
        .expect(201);
      await t.app
        .get(UnitOfWork)
        .run(() =>
          t.app
            .get(WebhookOutboxRepository)
            .enqueue(trustOrganizationId(org.id), 'flag.created', { flag_id: 'f', flag_key: 'k', app_id: 'a' }),
        );
      const final = spec.succeeds ? 'succeeded' : 'failed';
      await eventually(
        async () => {
          const [row] = await t.sql<{ status: string }>(
            `SELECT status FROM webhook_deliveries WHERE endpoint_id = $1`,
            [created.body.id],
          );
          return row?.status === final;
        },
        { step: () => dispatcher.sweep(), timeoutMs: 15_000, intervalMs: 60 },
      );
      const [item] = (await agent.get(`/api/v1/org/webhooks/${created.body.id}/deliveries`).expect(200)).body.items;
      expect(item.attempts).toHaveLength(spec.succeeds ? 1 : 3);
      for (const attempt of item.attempts as { responseBody: string | null; error: string | null }[]) {
        expect((attempt.responseBody ?? '').length).toBeLessThanOrEqual(1000);
        if (!spec.succeeds) expect(attempt.error).toEqual(expect.any(String));
      }
      // The endpoint test reports the same receiver without failing either.
      const tested = await agent.post(`/api/v1/org/webhooks/${created.body.id}/test`);
      expect(tested.status).toBeLessThan(500);
      await t.http().get('/api/v1/health').expect(200);
    },
  );
});
