import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Metrics } from '../../src/metrics/metrics.js';
import { orgWithMember, randomClientIp } from '../factories/identity.js';
import { createAppRow } from '../factories/organization.js';
import { startTestApp, type TestApp } from '../harness/test-app.js';
import { metricFamilies, parseSamples, sampleValue } from '../support/prometheus-text.js';

/** Every series docs/operations.md documents, with its type. */
const DOCUMENTED_FAMILIES: Record<string, string> = {
  attestly_http_requests_total: 'counter',
  attestly_http_request_duration_seconds: 'histogram',
  attestly_attestation_outcomes_total: 'counter',
  attestly_attestation_failures_total: 'counter',
  attestly_webhook_deliveries_total: 'counter',
  attestly_rate_limit_rejections_total: 'counter',
  attestly_webhook_backlog: 'gauge',
  attestly_webhook_oldest_pending_age_seconds: 'gauge',
  attestly_flag_streams_open: 'gauge',
  attestly_db_pool_connections: 'gauge',
  attestly_db_pool_idle_connections: 'gauge',
  attestly_db_pool_waiting_requests: 'gauge',
  attestly_db_pool_max_connections: 'gauge',
  process_cpu_user_seconds_total: 'counter',
  process_resident_memory_bytes: 'gauge',
  nodejs_eventloop_lag_seconds: 'gauge',
  nodejs_heap_size_used_bytes: 'gauge',
};

describe('Prometheus metrics (GET /metrics)', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  async function scrape(): Promise<string> {
    const response = await t.http().get('/metrics').expect(200);
    expect(response.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    return response.text;
  }

  it('is public and declares every documented series with its type', async () => {
    const families = metricFamilies(await scrape());
    for (const [name, type] of Object.entries(DOCUMENTED_FAMILIES))
      expect([name, families.get(name)]).toEqual([name, type]);
  });

  it('counts and times requests by route template and status, never by raw URL', async () => {
    const { agent } = await orgWithMember(t);
    const appId = randomUUID();
    await agent.get(`/api/v1/apps/${appId}`).expect(404);
    await agent.get(`/api/v1/apps/${appId}`).expect(404);
    await t.http().get(`/no/such/route/${appId}`).expect(404);
    await t.http().get('/health').expect(200);

    const text = await scrape();
    expect(text).not.toContain(appId);
    const app = { method: 'GET', route: '/api/v1/apps/:appID', status: '404' };
    expect(sampleValue(text, 'attestly_http_requests_total', app)).toBe(2);
    expect(sampleValue(text, 'attestly_http_request_duration_seconds_count', app)).toBe(2);
    expect(sampleValue(text, 'attestly_http_request_duration_seconds_bucket', { ...app, le: '+Inf' })).toBe(2);
    expect(sampleValue(text, 'attestly_http_request_duration_seconds_sum', app)).toBeGreaterThan(0);
    expect(
      sampleValue(text, 'attestly_http_requests_total', { route: 'unmatched', status: '404' }),
    ).toBeGreaterThanOrEqual(1);
    expect(
      sampleValue(text, 'attestly_http_requests_total', { method: 'GET', route: '/health', status: '200' }),
    ).toBeGreaterThanOrEqual(1);
  });

  it('counts attestation outcomes by call, result and the error envelope code', async () => {
    const { org } = await orgWithMember(t);
    const app = await createAppRow(t, org);
    const headers = { 'X-Bundle-ID': app.bundleId, 'X-Team-ID': app.teamId };
    const before = await scrape();

    const validate = await t
      .http()
      .post('/api/v1/attestation/validate')
      .set(headers)
      .send({ keyId: 'AAAA', attestationObject: 'AAAA', challenge: 'not-issued' });
    expect(validate.status).toBeGreaterThanOrEqual(400);
    expect(validate.status).toBeLessThan(500);
    const refresh = await t.http().post('/api/v1/attestation/refresh').set(headers).send({});
    expect(refresh.status).toBe(422);
    const unknownApp = await t
      .http()
      .post('/api/v1/attestation/refresh')
      .set({ 'X-Bundle-ID': 'com.example.none', 'X-Team-ID': 'NONE' })
      .send({});
    expect(unknownApp.status).toBe(404);

    const after = await scrape();
    const delta = (labels: Record<string, string>) =>
      (sampleValue(after, 'attestly_attestation_outcomes_total', labels) ?? 0) -
      (sampleValue(before, 'attestly_attestation_outcomes_total', labels) ?? 0);
    expect(delta({ type: 'validate', result: 'rejected', code: validate.body.code as string })).toBe(1);
    expect(delta({ type: 'refresh', result: 'rejected', code: 'unprocessable_entity' })).toBe(1);
    expect(delta({ type: 'refresh', result: 'rejected', code: 'app_not_found' })).toBe(1);
  });

  it('counts 429 answers by route', async () => {
    const ip = randomClientIp();
    let refused = 0;
    for (let i = 0; i < 8; i++) {
      const response = await t
        .http()
        .post('/api/v1/auth/forgot-password')
        .set('X-Forwarded-For', ip)
        .send({ email: 'nobody@example.com' });
      if (response.status === 429) refused++;
    }
    expect(refused).toBeGreaterThan(0);
    const text = await scrape();
    expect(sampleValue(text, 'attestly_rate_limit_rejections_total', { route: '/api/v1/auth/forgot-password' })).toBe(
      refused,
    );
  });

  it('reports the database pool at scrape time', async () => {
    const text = await scrape();
    expect(sampleValue(text, 'attestly_db_pool_connections')).toBeGreaterThanOrEqual(1);
    expect(sampleValue(text, 'attestly_db_pool_idle_connections')).toBeGreaterThanOrEqual(0);
    expect(sampleValue(text, 'attestly_db_pool_waiting_requests')).toBe(0);
    expect(sampleValue(text, 'attestly_db_pool_max_connections')).toBe(20);
  });

  it('counts webhook deliveries reported through the injectable Metrics', async () => {
    const metrics = t.app.get(Metrics);
    metrics.webhookDelivery('succeeded');
    metrics.webhookDelivery('retrying');
    metrics.webhookDelivery('retrying');
    const text = await scrape();
    expect(sampleValue(text, 'attestly_webhook_deliveries_total', { outcome: 'succeeded' })).toBeGreaterThanOrEqual(1);
    expect(sampleValue(text, 'attestly_webhook_deliveries_total', { outcome: 'retrying' })).toBeGreaterThanOrEqual(2);
  });

  it('exposes default process metrics', async () => {
    const samples = parseSamples(await scrape());
    expect(samples.find((sample) => sample.name === 'process_resident_memory_bytes')?.value).toBeGreaterThan(0);
    expect(samples.find((sample) => sample.name === 'nodejs_heap_size_used_bytes')?.value).toBeGreaterThan(0);
  });
});

describe('GET /metrics with METRICS_TOKEN', () => {
  let t: TestApp;
  const token = `metrics-${randomUUID()}`;

  beforeAll(async () => {
    process.env.METRICS_TOKEN = token;
    try {
      t = await startTestApp();
    } finally {
      delete process.env.METRICS_TOKEN;
    }
  });
  afterAll(async () => {
    await t.close();
  });

  it('asks for the token as a Bearer credential', async () => {
    const missing = await t.http().get('/metrics').expect(401);
    expect(missing.body.code).toBe('unauthorized');
    expect(missing.headers['www-authenticate']).toMatch(/^Bearer/);
    await t.http().get('/metrics').set('Authorization', 'Bearer wrong').expect(401);
    const allowed = await t.http().get('/metrics').set('Authorization', `Bearer ${token}`).expect(200);
    expect(allowed.text).toContain('attestly_http_requests_total');
  });
});

describe('GET /metrics in production (NODE_ENV=production, as the image sets it)', () => {
  let closed: TestApp;
  let open: TestApp;
  const token = `metrics-${randomUUID()}`;
  const nodeEnv = process.env.NODE_ENV;

  beforeAll(async () => {
    process.env.NODE_ENV = 'production';
    try {
      closed = await startTestApp();
      process.env.METRICS_TOKEN = token;
      open = await startTestApp();
    } finally {
      delete process.env.METRICS_TOKEN;
      process.env.NODE_ENV = nodeEnv;
    }
  });
  afterAll(async () => {
    await closed?.close();
    await open?.close();
  });

  it('is closed without METRICS_TOKEN, whatever the request carries, and says what to set', async () => {
    for (const authorization of [undefined, 'Bearer ', `Bearer ${token}`]) {
      const request = closed.http().get('/metrics');
      if (authorization) request.set('Authorization', authorization);
      const refused = await request.expect(403);
      expect(refused.body.code).toBe('forbidden');
      expect(refused.body.hint).toContain('METRICS_TOKEN');
      expect(refused.text).not.toContain('attestly_http_requests_total');
    }
  });

  it('answers the scraper that sends METRICS_TOKEN', async () => {
    await open.http().get('/metrics').expect(401);
    const allowed = await open.http().get('/metrics').set('Authorization', `Bearer ${token}`).expect(200);
    expect(allowed.text).toContain('attestly_http_requests_total');
  });
});
