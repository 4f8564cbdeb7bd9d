import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startTestApp, type TestApp } from '../harness/test-app.js';
import { adminQuery, harnessDatabase } from '../harness/database.js';
import { LOCAL_REDIS_URL, redisAnswers } from '../support/redis.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('foundation: conventions shared by every endpoint', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  it('GET /health answers healthy with the commit, for liveness probes', async () => {
    const response = await t.http().get('/health').expect(200);
    expect(response.body).toEqual({ status: 'healthy', timestamp: expect.any(String), commit: 'test-commit' });
    expect(new Date(response.body.timestamp).toISOString()).toBe(response.body.timestamp);
  });

  it('stamps X-Service-Commit and a generated UUID X-Request-ID on every response', async () => {
    const response = await t.http().get('/health').expect(200);
    expect(response.headers['x-service-commit']).toBe('test-commit');
    expect(response.headers['x-request-id']).toMatch(UUID);
  });

  it('keeps an idle keep-alive connection 65 s, longer than the 60 s of the proxies in front of it', async () => {
    // With Node's 5 s default, a proxy reusing a connection the service is closing gets ECONNRESET (a 502).
    const response = await t.http().get('/health').set('Connection', 'keep-alive').expect(200);
    expect(response.headers.connection).toBe('keep-alive');
    expect(response.headers['keep-alive']).toBe('timeout=65');
  });

  it('echoes a caller X-Request-ID, and replaces one that is not a sane identifier', async () => {
    const echoed = await t.http().get('/health').set('X-Request-ID', 'trace-123.abc').expect(200);
    expect(echoed.headers['x-request-id']).toBe('trace-123.abc');
    const replaced = await t.http().get('/health').set('X-Request-ID', 'bad id with spaces').expect(200);
    expect(replaced.headers['x-request-id']).toMatch(UUID);
  });

  it('answers an unknown route with the 404 envelope whose requestId equals the header', async () => {
    const response = await t.http().get('/api/v1/nothing-here').set('X-Request-ID', 'req-404').expect(404);
    expect(response.body).toEqual({
      error: 'No route for GET /api/v1/nothing-here',
      code: 'not_found',
      requestId: 'req-404',
    });
  });

  it('answers malformed JSON with 400 in the envelope, never 500', async () => {
    const response = await t
      .http()
      .post('/api/v1/health')
      .set('Content-Type', 'application/json')
      .send('{bad')
      .expect(400);
    expect(response.body).toMatchObject({ code: 'bad_request', error: expect.stringContaining('JSON') });
    expect(response.body.requestId).toBe(response.headers['x-request-id']);
  });

  it('answers a body over 1 MiB with 413 in the envelope', async () => {
    const huge = JSON.stringify({ data: 'x'.repeat(1024 * 1024 + 10) });
    const response = await t
      .http()
      .post('/api/v1/health')
      .set('Content-Type', 'application/json')
      .send(huge)
      .expect(413);
    expect(response.body).toMatchObject({ code: 'payload_too_large', requestId: expect.any(String) });
  });

  it('reports the database round trip in /api/v1/health without a tenant block by default', async () => {
    const response = await t.http().get('/api/v1/health').expect(200);
    expect(response.body).toEqual({
      status: 'ok',
      version: 'v1',
      services: { api: { status: 'ok', latencyMs: 0 }, db: { status: 'ok', latencyMs: expect.any(Number) } },
      timestamp: expect.any(String),
      commit: 'test-commit',
    });
    const oneHeader = await t.http().get('/api/v1/health').set('X-Bundle-ID', 'com.example.app').expect(200);
    expect(oneHeader.body.tenant).toBeUndefined();
  });

  it('tells an SDK whether its Bundle ID + Team ID is registered, and nothing more', async () => {
    const [org] = await t.sql<{ id: string }>(
      `INSERT INTO organizations (name, slug, service_tier) VALUES ('Acme', 'acme', 'professional') RETURNING id`,
    );
    await t.sql(
      `INSERT INTO apps (organization_id, app_name, bundle_id, team_id, is_primary) VALUES ($1, 'A', 'com.acme.app', 'TEAM123456', true)`,
      [org.id],
    );
    const found = await t
      .http()
      .get('/api/v1/health')
      .set('X-Bundle-ID', 'com.acme.app')
      .set('X-Team-ID', 'TEAM123456')
      .expect(200);
    expect(found.body.tenant).toEqual({ found: true, appRegistered: true, attestationEnabled: true });

    await t.sql(`UPDATE apps SET is_active = false WHERE bundle_id = 'com.acme.app'`);
    const inactive = await t
      .http()
      .get('/api/v1/health')
      .set('X-Bundle-ID', 'com.acme.app')
      .set('X-Team-ID', 'TEAM123456');
    expect(inactive.body.tenant.attestationEnabled).toBe(false);

    const missing = await t
      .http()
      .get('/api/v1/health')
      .set('X-Bundle-ID', 'com.acme.app')
      .set('X-Team-ID', 'OTHERTEAM1')
      .expect(200);
    expect(missing.body.tenant).toEqual({
      found: false,
      appRegistered: false,
      attestationEnabled: null,
      hint: expect.any(String),
    });
  });

  it('reports all four components healthy on /api/v1/health/status', async () => {
    const response = await t.http().get('/api/v1/health/status').expect(200);
    expect(response.body).toMatchObject({ status: 'healthy', version: 'test-commit' });
    for (const name of ['database', 'attestation', 'featureFlags', 'jwtSigning']) {
      expect(response.body.components[name].status).toBe('healthy');
    }
  });
});

describe('foundation: health when the database goes away', () => {
  it('reports degraded with -1 and 503 readiness, while liveness stays healthy', async () => {
    const t = await startTestApp();
    try {
      const name = new URL(t.config.databaseUrl).pathname.slice(1);
      await adminQuery(harnessDatabase().adminUrl, `DROP DATABASE "${name}" WITH (FORCE)`);

      const summary = await t.http().get('/api/v1/health').set('X-Bundle-ID', 'a.b').set('X-Team-ID', 'T').expect(200);
      expect(summary.body.status).toBe('degraded');
      expect(summary.body.services.db).toEqual({ status: 'degraded', latencyMs: -1 });
      expect(summary.body.tenant).toBeUndefined();

      const readiness = await t.http().get('/api/v1/health/status').expect(503);
      expect(readiness.body.status).toBe('degraded');
      expect(readiness.body.components.database.status).toBe('unhealthy');

      await t.http().get('/health').expect(200);
    } finally {
      await t.close();
    }
  });
});

const redisUp = await redisAnswers();

describe('foundation: readiness and Redis', () => {
  it('leaves Redis out of readiness when REDIS_URL is unset', async () => {
    const t = await startTestApp({ REDIS_URL: '' });
    try {
      const response = await t.http().get('/api/v1/health/status').expect(200);
      expect(Object.keys(response.body.components).sort()).toEqual([
        'attestation',
        'database',
        'featureFlags',
        'jwtSigning',
      ]);
    } finally {
      await t.close();
    }
  });

  it('answers 503 naming Redis when REDIS_URL is set and nothing answers there', async () => {
    // Port 1 on loopback: nothing listens, so every connection is refused at once.
    const t = await startTestApp({ REDIS_URL: 'redis://127.0.0.1:1' });
    try {
      const response = await t.http().get('/api/v1/health/status').expect(503);
      expect(response.body.status).toBe('degraded');
      expect(response.body.components.redis).toEqual({
        status: 'unhealthy',
        latencyMs: -1,
        error: 'redis unreachable',
      });
      expect(response.body.components.database.status).toBe('healthy');
      await t.http().get('/health').expect(200);
    } finally {
      await t.close();
    }
  });

  (redisUp ? it : it.skip)(
    redisUp
      ? 'reports a reachable Redis healthy'
      : `reports a reachable Redis healthy — SKIPPED: no Redis at ${LOCAL_REDIS_URL}`,
    async () => {
      const t = await startTestApp({ REDIS_URL: LOCAL_REDIS_URL });
      try {
        const response = await t.http().get('/api/v1/health/status').expect(200);
        expect(response.body.components.redis).toEqual({ status: 'healthy', latencyMs: expect.any(Number) });
      } finally {
        await t.close();
      }
    },
  );
});
