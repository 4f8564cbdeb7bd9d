import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { createHmac } from 'node:crypto';
import { SchedulerRegistry } from '@nestjs/schedule';
import { createApp } from '../../src/app.js';
import { createLogger } from '../../src/common/logging/logger.js';
import { DEFAULT_DELIVERY_SETTINGS, WebhookDispatcher } from '../../src/webhooks/webhook-dispatcher.js';
import type { WebhookEventName } from '../../src/webhooks/webhook-event-catalog.js';
import { WebhookOutboxRepository } from '../../src/webhooks/webhook-outbox.repository.js';
import { sampleValue } from '../support/prometheus-text.js';
import { orgWithMember, type TestOrg } from '../factories/identity.js';
import { createWebhookEndpoint } from '../factories/webhooks.js';
import { startTestApp, type HttpClient, type TestApp } from '../harness/test-app.js';
import {
  eventually,
  failTimes,
  hang,
  respond,
  sleep,
  verifyingSignatures,
  type WebhookReceiver,
  WebhookReceivers,
} from '../support/webhook-receiver.js';
import { UnitOfWork } from '../../src/database/unit-of-work.js';
import { trustOrganizationId } from '../../src/common/access/tenant-id.js';

/** Short delays for tests: retries after at least 200 ms and 400 ms; a 600 ms timeout. */
const TEST_SETTINGS = {
  ...DEFAULT_DELIVERY_SETTINGS,
  retry: { baseDelayMs: 200, factor: 2 },
  timeoutMs: 600,
  leaseMs: 3_000,
};

interface Endpoint {
  id: string;
  secret: string;
}

interface DeliveryRow {
  id: string;
  status: string;
  attempt_count: number;
}

describe('webhook delivery', () => {
  let t: TestApp;
  let dispatcher: WebhookDispatcher;
  let outbox: WebhookOutboxRepository;
  const receivers = new WebhookReceivers();

  beforeAll(async () => {
    WebhookDispatcher.settings = { ...TEST_SETTINGS };
    t = await startTestApp();
    // The tests drive every sweep themselves, so each step happens exactly when they say.
    t.app.get(SchedulerRegistry).deleteInterval('webhook-sweep');
    dispatcher = t.app.get(WebhookDispatcher);
    outbox = t.app.get(WebhookOutboxRepository);
  });
  afterEach(() => {
    WebhookDispatcher.settings = { ...TEST_SETTINGS };
  });
  afterAll(async () => {
    await t.close();
    await receivers.closeAll();
  });

  async function paidOrg(tier = 'professional'): Promise<{ org: TestOrg; agent: HttpClient }> {
    return orgWithMember(t, { tier });
  }

  async function endpoint(
    agent: HttpClient,
    target: WebhookReceiver,
    events: WebhookEventName[] = ['flag.created'],
  ): Promise<Endpoint> {
    return createWebhookEndpoint(agent, target.url, events);
  }

  let sequence = 0;
  function emit(
    org: TestOrg,
    event: WebhookEventName = 'flag.created',
    data: Record<string, unknown> = {},
  ): Promise<number> {
    const flag = { flag_id: `flag-${++sequence}`, flag_key: `key_${sequence}`, app_id: 'app', ...data };
    return t.app.get(UnitOfWork).run(() => outbox.enqueue(trustOrganizationId(org.id), event, flag));
  }

  function deliveries(endpointId: string): Promise<DeliveryRow[]> {
    return t.sql<DeliveryRow>(
      `SELECT id, status, attempt_count FROM webhook_deliveries WHERE endpoint_id = $1 ORDER BY created_at`,
      [endpointId],
    );
  }

  function history(agent: HttpClient, endpointId: string) {
    return agent.get(`/api/v1/org/webhooks/${endpointId}/deliveries`).expect(200);
  }

  const sweepUntil = (check: () => boolean | Promise<boolean>) => eventually(check, { step: () => dispatcher.sweep() });

  it('POSTs {event, timestamp, data} with sorted keys, signed, with event, delivery id and timestamp headers', async () => {
    const { org, agent } = await paidOrg();
    const target = await receivers.start(respond(200, 'ok'));
    const { id, secret } = await endpoint(agent, target);
    expect(await emit(org, 'flag.created', { nested: { b: 1, a: 2 }, z_last: true })).toBe(1);

    await sweepUntil(() => target.received.length === 1);
    const [request] = target.received;
    const [delivery] = await deliveries(id);
    expect(request.body).toMatch(
      /^\{"data":\{"app_id":"app","flag_id":"flag-\d+","flag_key":"key_\d+","nested":\{"a":2,"b":1\},"z_last":true\},"event":"flag.created","timestamp":"[^"]+Z"\}$/,
    );
    expect(request.headers['content-type']).toBe('application/json');
    expect(request.event).toBe('flag.created');
    expect(request.deliveryId).toBe(delivery.id);
    expect(Math.abs(Number(request.headers['x-service-timestamp']) - Date.now() / 1000)).toBeLessThan(10);
    expect(request.signature).toBe(`sha256=${createHmac('sha256', secret).update(request.raw).digest('hex')}`);
    expect(delivery).toMatchObject({ status: 'succeeded', attempt_count: 1 });

    const [item] = (await history(agent, id)).body.items;
    expect(item).toMatchObject({
      id: delivery.id,
      event: 'flag.created',
      status: 'succeeded',
      attemptCount: 1,
      maxAttempts: 3,
      nextAttemptAt: null,
      lastStatusCode: 200,
      lastError: null,
      attempts: [{ attemptNumber: 1, statusCode: 200, responseBody: 'ok', error: null, latencyMs: expect.any(Number) }],
    });
    expect(JSON.parse(request.body)).toEqual(item.payload);
  });

  it('counts recorded attempts by outcome on /metrics and reports the backlog and its oldest age', async () => {
    const scrape = async () => (await t.http().get('/metrics').expect(200)).text;
    const count = (text: string, outcome: string) =>
      sampleValue(text, 'attestly_webhook_deliveries_total', { outcome }) ?? 0;
    const { org, agent } = await paidOrg();
    const target = await receivers.start(failTimes(1));
    await endpoint(agent, target);
    const before = await scrape();
    await emit(org);
    await sleep(20);

    const queued = await scrape();
    expect(sampleValue(queued, 'attestly_webhook_backlog')).toBeGreaterThanOrEqual(
      (sampleValue(before, 'attestly_webhook_backlog') ?? 0) + 1,
    );
    expect(sampleValue(queued, 'attestly_webhook_oldest_pending_age_seconds')).toBeGreaterThan(0);

    await sweepUntil(() => target.received.length === 2);
    await eventually(async () => count(await scrape(), 'succeeded') === count(before, 'succeeded') + 1);
    const after = await scrape();
    expect(count(after, 'retrying')).toBe(count(before, 'retrying') + 1);
    expect(count(after, 'failed')).toBe(count(before, 'failed'));
  });

  it('retries a receiver that fails twice: three attempts, spaced by at least the backoff, then delivered', async () => {
    const { org, agent } = await paidOrg();
    const target = await receivers.start(failTimes(2));
    const { id } = await endpoint(agent, target);
    await emit(org);

    await sweepUntil(async () => (await deliveries(id))[0].status === 'succeeded');
    expect(target.received.map((request) => request.answered)).toEqual([500, 500, 200]);
    const [first, second, third] = target.received;
    expect(second.receivedAt - first.receivedAt).toBeGreaterThanOrEqual(200);
    expect(third.receivedAt - second.receivedAt).toBeGreaterThanOrEqual(400);
    // One delivery: the same id and the same signed bytes on every attempt.
    expect(new Set(target.received.map((request) => request.deliveryId)).size).toBe(1);
    expect(new Set(target.received.map((request) => request.body)).size).toBe(1);

    const [item] = (await history(agent, id)).body.items;
    expect(item).toMatchObject({ status: 'succeeded', attemptCount: 3, lastStatusCode: 200 });
    expect(item.attempts).toMatchObject([
      { attemptNumber: 1, statusCode: 500, responseBody: 'failure 1', error: 'endpoint answered 500' },
      { attemptNumber: 2, statusCode: 500, responseBody: 'failure 2', error: 'endpoint answered 500' },
      { attemptNumber: 3, statusCode: 200, responseBody: 'ok', error: null },
    ]);
  });

  it('gives up after three failures; a manual retry gives a fresh budget of three', async () => {
    const { org, agent } = await paidOrg();
    const target = await receivers.start(() => ({ status: 503, body: 'x'.repeat(5_000) }));
    const { id } = await endpoint(agent, target);
    await emit(org);

    await sweepUntil(async () => (await deliveries(id))[0].status === 'failed');
    expect(target.received).toHaveLength(3);
    // Nothing more, however long the sweeps go on.
    for (let i = 0; i < 5; i++) {
      await sleep(200);
      await dispatcher.sweep();
    }
    expect(target.received).toHaveLength(3);

    const [failed] = (await history(agent, id)).body.items;
    expect(failed).toMatchObject({ status: 'failed', attemptCount: 3, lastStatusCode: 503, nextAttemptAt: null });
    expect(failed.attempts).toHaveLength(3);
    expect(failed.attempts[0].responseBody).toBe('x'.repeat(1000));

    const retried = await agent.post(`/api/v1/org/webhooks/${id}/deliveries/${failed.id}/retry`).expect(202);
    expect(retried.body).toMatchObject({ id: failed.id, status: 'pending', attemptCount: 0 });
    const again = await agent.post(`/api/v1/org/webhooks/${id}/deliveries/${failed.id}/retry`).expect(409);
    expect(again.body.code).toBe('conflict');

    await sweepUntil(async () => (await deliveries(id))[0].status === 'failed');
    expect(target.received).toHaveLength(6);
    const [refailed] = (await history(agent, id)).body.items;
    expect(refailed).toMatchObject({ status: 'failed', attemptCount: 3 });
    expect(refailed.attempts.map((attempt: { attemptNumber: number }) => attempt.attemptNumber)).toEqual([
      1, 2, 3, 4, 5, 6,
    ]);

    target.behave(respond(200));
    await agent.post(`/api/v1/org/webhooks/${id}/deliveries/${failed.id}/retry`).expect(202);
    await sweepUntil(async () => (await deliveries(id))[0].status === 'succeeded');
    expect(target.received).toHaveLength(7);
    await agent.post(`/api/v1/org/webhooks/${id}/deliveries/${failed.id}/retry`).expect(409);
  });

  it('records a timeout for a receiver that never answers', async () => {
    const { org, agent } = await paidOrg();
    const target = await receivers.start(hang);
    const { id } = await endpoint(agent, target);
    await emit(org);

    const started = Date.now();
    await dispatcher.sweep();
    expect(Date.now() - started).toBeLessThan(5_000);
    const [item] = (await history(agent, id)).body.items;
    expect(item).toMatchObject({
      status: 'pending',
      attemptCount: 1,
      lastStatusCode: null,
      lastError: expect.stringMatching(/^timeout/),
    });
    expect(item.attempts[0]).toMatchObject({
      statusCode: null,
      responseBody: null,
      error: expect.stringMatching(/^timeout/),
    });
    expect(item.attempts[0].latencyMs).toBeGreaterThanOrEqual(590);
    await agent.delete(`/api/v1/org/webhooks/${id}`).expect(204);
  });

  it('delivers each event exactly once when two app instances sweep the same database', async () => {
    const second = await createApp(t.config, createLogger(t.config));
    await second.init();
    second.get(SchedulerRegistry).deleteInterval('webhook-sweep');
    const otherDispatcher = second.get(WebhookDispatcher);
    try {
      // Small batches, so the two instances' claims interleave many times; a lease and a timeout far
      // longer than any attempt, so a slow machine cannot turn a lease expiry or a slow answer (each
      // tested on its own) into a retry, which would be a second attempt by design.
      WebhookDispatcher.settings = { ...TEST_SETTINGS, batchSize: 3, leaseMs: 120_000, timeoutMs: 30_000 };
      const { org, agent } = await paidOrg();
      const targets = [await receivers.start(), await receivers.start()];
      const endpoints = [await endpoint(agent, targets[0]), await endpoint(agent, targets[1])];
      for (let i = 0; i < 40; i++) expect(await emit(org)).toBe(2);

      const started = [0, 0];
      const sweep = async (index: number) => {
        const count = await [dispatcher, otherDispatcher][index].sweep();
        started[index] += count;
      };
      await eventually(() => targets.every((target) => target.received.length >= 40), {
        step: () => Promise.all([sweep(0), sweep(1), sweep(0), sweep(1)]),
      });
      await Promise.all([sweep(0), sweep(1)]);
      // Both instances did part of the work, and together no attempt twice.
      expect(started[0]).toBeGreaterThan(0);
      expect(started[1]).toBeGreaterThan(0);
      expect(started[0] + started[1]).toBe(80);
      for (const [index, target] of targets.entries()) {
        const ids = target.received.map((request) => request.deliveryId);
        expect(ids).toHaveLength(40);
        expect(new Set(ids).size).toBe(40);
        const rows = await deliveries(endpoints[index].id);
        expect(rows.every((row) => row.status === 'succeeded' && row.attempt_count === 1)).toBe(true);
        expect(new Set(rows.map((row) => row.id))).toEqual(new Set(ids));
      }
      const [{ attempts }] = await t.sql<{ attempts: number }>(
        `SELECT count(*)::int AS attempts FROM webhook_delivery_attempts WHERE organization_id = $1`,
        [org.id],
      );
      expect(attempts).toBe(80);
    } finally {
      await second.close();
    }
  });

  it('retries an attempt whose sweeper died after claiming it, once its lease ends, without spending the budget', async () => {
    const { org, agent } = await paidOrg();
    const target = await receivers.start();
    const { id } = await endpoint(agent, target);
    await emit(org);

    WebhookDispatcher.settings = { ...TEST_SETTINGS, leaseMs: 800 };
    // A sweeper claims the attempt and dies before sending or recording it.
    const claimed = (await dispatcher.claim(100)).filter((delivery) => delivery.endpoint_id === id);
    expect(claimed).toHaveLength(1);

    // While the lease holds, no other sweep takes it: never twice at once.
    await dispatcher.sweep();
    expect(target.received).toHaveLength(0);

    await sleep(900);
    await dispatcher.sweep();
    expect(target.received).toHaveLength(1);
    const [row] = await deliveries(id);
    expect(row).toMatchObject({ status: 'succeeded', attempt_count: 1 });

    // The dead sweeper's late report changes nothing: its claim is gone.
    await dispatcher['record'](claimed[0], { statusCode: 500, responseBody: 'late', error: 'late', latencyMs: 1 });
    expect(await deliveries(id)).toEqual([row]);
    expect((await history(agent, id)).body.items[0].attempts).toHaveLength(1);
  });

  it('does not retry the pending deliveries of a deleted endpoint', async () => {
    const { org, agent } = await paidOrg();
    const target = await receivers.start(respond(500));
    const { id } = await endpoint(agent, target);
    await emit(org);
    await dispatcher.sweep();
    expect(target.received).toHaveLength(1);

    await agent.delete(`/api/v1/org/webhooks/${id}`).expect(204);
    await sleep(700);
    await dispatcher.sweep();
    expect(target.received).toHaveLength(1);
    expect(await deliveries(id)).toEqual([]);
  });

  it('holds the queued deliveries of an inactive endpoint, writes none for it, and resumes on reactivation', async () => {
    const { org, agent } = await paidOrg();
    const target = await receivers.start();
    const { id } = await endpoint(agent, target);
    await emit(org);
    await agent.patch(`/api/v1/org/webhooks/${id}`).send({ isActive: false }).expect(200);
    expect(await emit(org)).toBe(0);
    await dispatcher.sweep();
    expect(target.received).toHaveLength(0);

    await agent.patch(`/api/v1/org/webhooks/${id}`).send({ isActive: true }).expect(200);
    await sweepUntil(() => target.received.length === 1);
    expect(await deliveries(id)).toMatchObject([{ status: 'succeeded' }]);
  });

  it('writes events with their cause only: nothing after a rollback, on Free, or for unsubscribed events', async () => {
    const { org, agent } = await paidOrg('basic');
    const target = await receivers.start();
    const { id } = await endpoint(agent, target, ['flag.created']);

    await expect(
      t.app.get(UnitOfWork).run(async () => {
        expect(await outbox.enqueue(trustOrganizationId(org.id), 'flag.created', { flag_id: 'f' })).toBe(1);
        throw new Error('the cause failed');
      }),
    ).rejects.toThrow('the cause failed');
    expect(await emit(org, 'flag.deleted')).toBe(0);
    expect(await emit(org, 'subscription.changed')).toBe(0);
    await t.sql(`UPDATE organizations SET service_tier = 'free' WHERE id = $1`, [org.id]);
    expect(await emit(org, 'flag.created')).toBe(0);

    const [{ events }] = await t.sql<{ events: number }>(
      `SELECT count(*)::int AS events FROM webhook_events WHERE organization_id = $1`,
      [org.id],
    );
    expect(events).toBe(0);
    expect(await deliveries(id)).toEqual([]);
  });

  it('never fails the cause when writing the event fails', async () => {
    const { org } = await paidOrg();
    const uow = t.app.get(UnitOfWork);
    await uow.run(async () => {
      const manager = uow.manager();
      await manager.query(`UPDATE organizations SET name = 'Renamed by the cause' WHERE id = $1`, [org.id]);
      expect(await outbox.enqueue(trustOrganizationId('not-a-uuid'), 'flag.created', { flag_id: 'f' })).toBe(0);
      await manager.query('SELECT 1');
    });
    const [row] = await t.sql<{ name: string }>(`SELECT name FROM organizations WHERE id = $1`, [org.id]);
    expect(row.name).toBe('Renamed by the cause');
  });

  it('lets a receiver that checks signatures with only the documented rule accept every delivery', async () => {
    const { org, agent } = await paidOrg('enterprise');
    const secrets: string[] = [];
    const targets = [
      await receivers.start(verifyingSignatures(() => secrets[0])),
      await receivers.start(verifyingSignatures(() => secrets[1])),
    ];
    for (const target of targets) {
      const all: WebhookEventName[] = [
        'device.new',
        'device.attested.first',
        'device.high_risk',
        'device.attestation_failed',
        'attestation.anomaly',
        'flag.created',
        'flag.updated',
        'flag.deleted',
        'subscription.changed',
        'subscription.expired',
        'subscription.refunded',
      ];
      secrets.push((await endpoint(agent, target, all)).secret);
    }
    const awkward = [
      {
        text: 'é ✓ 日本語 😀',
        quote: '"\'\\',
        html: '</script><b>',
        separators: '\u2028\u2029',
        control: '\u0001\n\t',
      },
      {
        numbers: [0, -1, 1.5, 1e21, 0.1 + 0.2],
        nested: { z: { y: { x: [{ b: 2, a: 1 }] } } },
        empty: { list: [], text: '' },
      },
      { bools: [true, false, null], key_with_unicode_é: 1, 'a.b': 2, '': 'empty key' },
    ];
    const events: WebhookEventName[] = ['device.new', 'flag.updated', 'subscription.changed', 'attestation.anomaly'];
    for (const event of events) for (const data of awkward) expect(await emit(org, event, data)).toBe(2);

    await sweepUntil(() => targets.every((target) => target.received.length === 12));
    for (const target of targets) {
      expect(target.received.map((request) => request.answered)).toEqual(Array(12).fill(200));
    }
    const [{ failed }] = await t.sql<{ failed: number }>(
      `SELECT count(*)::int AS failed FROM webhook_deliveries WHERE organization_id = $1 AND status <> 'succeeded'`,
      [org.id],
    );
    expect(failed).toBe(0);
  });

  it('prunes delivered events past the retention period and keeps pending ones', async () => {
    const { org, agent } = await paidOrg('basic');
    const target = await receivers.start();
    const delivered = await endpoint(agent, target);
    await emit(org);
    await sweepUntil(() => target.received.length === 1);
    const paused = await endpoint(agent, target);
    await agent.patch(`/api/v1/org/webhooks/${delivered.id}`).send({ isActive: false }).expect(200);
    await emit(org);
    await agent.patch(`/api/v1/org/webhooks/${paused.id}`).send({ isActive: false }).expect(200);
    // Pro keeps 30 days.
    await t.sql(`UPDATE webhook_events SET occurred_at = now() - interval '31 days' WHERE organization_id = $1`, [
      org.id,
    ]);

    expect(await dispatcher.prune()).toBeGreaterThanOrEqual(1);
    expect(await deliveries(delivered.id)).toEqual([]);
    expect(await deliveries(paused.id)).toMatchObject([{ status: 'pending' }]);
    const [{ attempts }] = await t.sql<{ attempts: number }>(
      `SELECT count(*)::int AS attempts FROM webhook_delivery_attempts WHERE organization_id = $1`,
      [org.id],
    );
    expect(attempts).toBe(0);
  });
});
