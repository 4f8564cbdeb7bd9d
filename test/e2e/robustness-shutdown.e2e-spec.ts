// SIGTERM while requests are in flight, on the compiled service as a real process: what a rolling
// deployment does to every instance.
import { randomUUID } from 'node:crypto';
import { Agent, request as httpRequest } from 'node:http';
import { afterEach, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { generateApiKey } from '../../src/api-keys/api-key-secret.js';
import { createTestDatabase, dropTestDatabase } from '../harness/database.js';
import { probeClient, type ProbeResponse } from '../support/probe-client.js';
import { TEAM_ID } from '../support/sdk-client.js';
import { startServerProcess, type ServerProcess } from '../support/server-process.js';
import { sleep } from '../support/webhook-receiver.js';

interface Outcome {
  readonly response?: ProbeResponse;
  readonly error?: string;
  readonly at: number;
}

describe('SIGTERM during load', () => {
  const cleanups: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  async function server(env: Record<string, string> = {}): Promise<{ process: ServerProcess; databaseUrl: string }> {
    const database = await createTestDatabase();
    cleanups.push(() => dropTestDatabase(database.name));
    const started = await startServerProcess({ DATABASE_URL: database.url, ...env });
    cleanups.push(() => started.kill());
    return { process: started, databaseUrl: database.url };
  }

  it('finishes every request in flight with its answer, exits 0, and leaves no half-written sign-up', async () => {
    // Real bcrypt cost: each sign-up, answered 202 at once, then spends a few hundred ms hashing
    // before its transaction starts; the signal comes while that work is still running, and
    // shutdown waits for it.
    const { process: service, databaseUrl } = await server({ BCRYPT_ROUNDS: '11' });
    const client = probeClient(service.baseUrl);
    const emails = Array.from({ length: 12 }, (_, i) => `sigterm-${i}-${randomUUID().slice(0, 8)}@example.com`);
    const settle = (request: Promise<ProbeResponse>): Promise<Outcome> =>
      request.then(
        (response) => ({ response, at: Date.now() }),
        (error: unknown) => ({
          error: `${String(error)} (${String((error as { cause?: unknown }).cause)})`,
          at: Date.now(),
        }),
      );
    const signUps = emails.map((email) =>
      settle(
        client.send('post', '/api/v1/auth/register', {
          body: { email, password: 'correct-horse-battery', organizationName: `Org of ${email}` },
          timeoutMs: 20_000,
        }),
      ),
    );
    const reads = Array.from({ length: 8 }, () => settle(client.send('get', '/api/v1/health', { timeoutMs: 20_000 })));
    // Long enough for the server to have read every request (the hashing runs off the event loop).
    await sleep(300);
    service.child.kill('SIGTERM');

    const outcomes = await Promise.all([...signUps, ...reads]);
    expect(await service.exited).toBe(0);
    const answered = outcomes.filter((outcome) => outcome.response);
    const statuses = answered.map((outcome) => outcome.response!.status);
    // Sent before the signal, so each was in flight: each gets its real answer.
    expect(outcomes.filter((outcome) => outcome.error)).toEqual([]);
    // The accepted sign-ups' work, still running at the signal, ended before the exit (rows below).
    expect(service.output()).not.toContain('background task failed');
    expect(statuses.slice(0, signUps.length)).toEqual(signUps.map(() => 202));
    expect(statuses.slice(signUps.length)).toEqual(reads.map(() => 200));
    expect(service.output()).not.toMatch(/"level":50/);

    const db = new pg.Client({ connectionString: databaseUrl });
    await db.connect();
    try {
      const { rows } = await db.query<{ email: string; memberships: number; owners: number; tokens: number }>(
        `SELECT u.email,
                (SELECT count(*)::int FROM memberships m WHERE m.user_id = u.id) AS memberships,
                (SELECT count(*)::int FROM memberships m JOIN organizations o ON o.id = m.organization_id
                  WHERE m.user_id = u.id AND m.role = 'owner') AS owners,
                (SELECT count(*)::int FROM auth_tokens a WHERE a.user_id = u.id) AS tokens
           FROM users u WHERE u.email = ANY($1)`,
        [emails],
      );
      // Each sign-up is all or nothing: the user, the organization with its owner, the token.
      expect(rows).toHaveLength(emails.length);
      for (const row of rows) expect(row).toEqual({ email: row.email, memberships: 1, owners: 1, tokens: 1 });
      const orphans = await db.query(
        `SELECT o.id FROM organizations o WHERE NOT EXISTS (SELECT 1 FROM memberships m WHERE m.organization_id = o.id)`,
      );
      expect(orphans.rows).toEqual([]);
    } finally {
      await db.end();
    }
  });

  it('ends open event streams and idle connections, refuses new ones, and exits 0 promptly', async () => {
    const { process: service, databaseUrl } = await server();
    // A Business organization whose SDK holds a flag stream open (with an API key of the org).
    const db = new pg.Client({ connectionString: databaseUrl });
    await db.connect();
    const bundleId = `com.example.sigterm${Date.now()}`;
    const { key, prefix, hash } = generateApiKey('service');
    try {
      const [org] = (
        await db.query<{ id: string }>(
          `INSERT INTO organizations (name, slug, service_tier) VALUES ('Streams', $1, 'professional') RETURNING id`,
          [`streams-${randomUUID().slice(0, 8)}`],
        )
      ).rows;
      await db.query(
        `INSERT INTO apps (organization_id, app_name, bundle_id, team_id, is_primary) VALUES ($1, 'Streams', $2, $3, true)`,
        [org.id, bundleId, TEAM_ID],
      );
      await db.query(
        `INSERT INTO api_keys (organization_id, name, key_type, prefix, key_hash, scopes) VALUES ($1, 'sdk', 'service', $2, $3, '{flags:read}')`,
        [org.id, prefix, hash],
      );
    } finally {
      await db.end();
    }
    const stream = await fetch(`${service.baseUrl}/api/v1/flags/stream`, {
      headers: { 'x-bundle-id': bundleId, 'x-team-id': TEAM_ID, authorization: `Bearer ${key}` },
    });
    expect(stream.headers.get('content-type')).toMatch(/text\/event-stream/);
    const streamEnded = (async () => {
      const reader = stream.body!.getReader();
      try {
        while (!(await reader.read()).done);
        return 'ended';
      } catch (error) {
        return `failed: ${String(error)}`;
      }
    })();
    // And an idle keep-alive connection.
    await (await fetch(`${service.baseUrl}/api/v1/health`)).text();

    const signalled = Date.now();
    service.child.kill('SIGTERM');
    expect(await streamEnded).toBe('ended');
    expect(await service.exited).toBe(0);
    expect(Date.now() - signalled).toBeLessThan(10_000);
    await expect(probeClient(service.baseUrl).send('get', '/health', { timeoutMs: 2_000 })).rejects.toThrow();
  });

  it('with no traffic, exits 0 within 2 s of SIGTERM', async () => {
    const { process: service } = await server();
    // An idle keep-alive connection, as a load balancer keeps them.
    const agent = new Agent({ keepAlive: true });
    try {
      expect(await send(agent, `${service.baseUrl}/health`)).toMatchObject({ status: 200, connection: 'keep-alive' });
      service.child.kill('SIGTERM');
      const outcome = await Promise.race([service.exited, sleep(2_000).then(() => 'still running after 2 s')]);
      expect(outcome).toBe(0);
    } finally {
      agent.destroy();
    }
  });

  it('answers a request in flight on a busy keep-alive connection with Connection: close, then serves that client no more', async () => {
    // A sign-in at bcrypt cost 14 stays in flight long enough for the signal to arrive during it.
    const { process: service } = await server({ BCRYPT_ROUNDS: '14' });
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      // One connection, one request after another, as a busy SDK client or a proxy's pool does.
      const before = [];
      for (let i = 0; i < 20; i++) before.push(await send(agent, `${service.baseUrl}/health`));
      expect(new Set(before.map((answer) => answer.port)).size).toBe(1);
      expect(before.every((answer) => answer.status === 200 && answer.connection === 'keep-alive')).toBe(true);

      const inFlight = send(agent, `${service.baseUrl}/api/v1/auth/login`, {
        email: `nobody-${randomUUID()}@example.com`,
        password: 'not-the-password',
      });
      await sleep(300);
      service.child.kill('SIGTERM');
      const answer = await inFlight;
      expect({ status: answer.status, connection: answer.connection, port: answer.port }).toEqual({
        status: 401,
        connection: 'close',
        port: before[0].port,
      });
      // The connection is gone and the server takes no new one.
      await expect(send(agent, `${service.baseUrl}/health`)).rejects.toMatchObject({
        code: expect.stringMatching(/ECONNREFUSED|ECONNRESET/),
      });
      expect(await service.exited).toBe(0);
    } finally {
      agent.destroy();
    }
  });
});

/** A GET (or a JSON POST) over `agent`: the status, the Connection header and the local port (which connection). */
function send(
  agent: Agent,
  url: string,
  body?: unknown,
): Promise<{ status: number; connection: string | undefined; port: number }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      url,
      {
        agent,
        method: body === undefined ? 'GET' : 'POST',
        headers: body === undefined ? {} : { 'content-type': 'application/json' },
        timeout: 20_000,
      },
      (res) => {
        const port = req.socket?.localPort ?? 0;
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode ?? 0, connection: res.headers.connection, port }));
      },
    );
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}
