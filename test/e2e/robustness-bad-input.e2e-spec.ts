// Bad input on every route that takes a body, path parameters or a query, generated with
// fast-check (fixed seed, 15 cases per route): the service answers a 4xx error envelope whose
// requestId is the X-Request-ID header, never a 5xx, and writes nothing for what it refuses.
import { createHash } from 'node:crypto';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { SchedulerRegistry } from '@nestjs/schedule';
import { afterAnswers, startTestApp, type TestApp } from '../harness/test-app.js';
import { badInputCases, REFUSAL_STATUSES, type BadCase } from '../support/bad-input.js';
import { buildWorld, CALLERS, expectedOutcome, type World } from '../support/caller-world.js';
import { changedTables, fingerprint, fingerprintQuery } from '../support/db-fingerprint.js';
import { envelopeProblem, listen, type ProbeClient, type ProbeResponse } from '../support/probe-client.js';
import { describeAccess, routeName, routeTable, type Route } from '../support/route-table.js';
import { fabricatedRootEnv } from '../support/sdk-client.js';
import { buildResources, resourceParams, type ResourceIds } from '../support/tenant-resources.js';

const CASES_PER_ROUTE = 15;

const t: TestApp = await startTestApp(await fabricatedRootEnv());
const routes = routeTable(t.app).filter(
  (route) =>
    route.access &&
    (route.body || route.params.length || route.query || route.queryNames.length || route.method !== 'get'),
);

/** A per-route seed: the same cases on every run, a different mix for each route. */
function seedOf(route: Route): number {
  return createHash('sha256').update(routeName(route)).digest().readInt32BE(0);
}

describe('bad input on every route with a body or parameters', () => {
  let client: ProbeClient;
  let world: World;
  let ids: ResourceIds;
  let printQuery: string;

  beforeAll(async () => {
    // Nothing may change the database behind the tests' back between two fingerprints.
    const scheduler = t.app.get(SchedulerRegistry);
    for (const name of scheduler.getIntervals()) scheduler.deleteInterval(name);
    for (const name of scheduler.getTimeouts()) scheduler.deleteTimeout(name);
    for (const job of scheduler.getCronJobs().values()) void job.stop();
    client = await listen(t);
    world = await buildWorld(t, client);
    ids = await buildResources(t, client, world);
    printQuery = await fingerprintQuery(t);
  }, 60_000);
  afterAll(async () => {
    await client.close();
    await t.close();
  });

  function callerHeaders(route: Route): Record<string, string> {
    const preferred = route.access?.public
      ? ['anonymous']
      : ['owner session', 'attestation JWT of the app', ...CALLERS.map((caller) => caller.name)];
    const name = preferred.find(
      (candidate) =>
        expectedOutcome(
          route.access,
          route.guards,
          CALLERS.find((caller) => caller.name === candidate)!,
        ) === 'passes',
    );
    if (!name) throw new Error(`no caller passes ${routeName(route)}`);
    // A device token names its own device: X-Device-ID may only repeat it (decision 0074).
    const deviceId = CALLERS.find((caller) => caller.name === name)!.deviceToken ? world.deviceKeyId : 'probe-device';
    return { ...world.headers.get(name)!, 'x-device-id': deviceId };
  }

  function casesOf(route: Route): BadCase[] {
    const params: Record<string, string> = {};
    for (const [name, value] of Object.entries({ ...resourceParams(route, ids), keyId: 'probe-key' })) {
      params[name] = encodeURIComponent(value);
    }
    const known = {
      appId: ids.appId,
      app_id: ids.appId,
      claimIds: [ids.claimID],
      slug: world.orgA.slug,
      version: 1,
    };
    return badInputCases(route, { params, known }, CASES_PER_ROUTE, seedOf(route));
  }

  async function send(route: Route, headers: Record<string, string>, badCase: BadCase): Promise<ProbeResponse> {
    const path = route.path.replace(/:([A-Za-z0-9_]+)/g, (_match, name: string) => badCase.params[name] ?? 'probe');
    const url = badCase.query ? `${path}?${badCase.query}` : path;
    return client.send(route.method, url, {
      headers,
      body: badCase.rawBody ?? badCase.body,
      timeoutMs: 15_000,
    });
  }

  function problemWith(badCase: BadCase, response: ProbeResponse): string | null {
    const json = response.headers.get('content-type')?.includes('json');
    if (response.status >= 500) return `answered ${response.status}: ${response.text.slice(0, 200)}`;
    if (response.status >= 400 && json) {
      const envelope = envelopeProblem(response);
      if (envelope) return `answered ${response.status} without the envelope: ${envelope}`;
    }
    if (badCase.expect === 'edge') return null;
    const statuses = badCase.statuses ?? REFUSAL_STATUSES;
    if (!statuses.includes(response.status)) {
      return `answered ${response.status}, expected ${statuses.join('/')}: ${response.text.slice(0, 200)}`;
    }
    return null;
  }

  it('covers the routes of every feature', () => {
    expect(routes.length).toBeGreaterThan(100);
  });

  /** `field: message` of a 422 (or of a 400 on the routes whose documented status for bad input is 400). */
  function refusal(response: ProbeResponse): string {
    if (response.status === 422 && !envelopeProblem(response)) {
      const [first] = response.body!.fields as { field: string; message: string }[];
      return `${first.field}: ${first.message}`;
    }
    if (response.status === 400 && !envelopeProblem(response)) return String(response.body!.error);
    return `answered ${response.status}: ${response.text.slice(0, 200)}`;
  }

  describe('bodies that attack the parser', () => {
    const deep = (levels: number) => '['.repeat(levels) + ']'.repeat(levels);

    it('refuses JSON nested 65 to 100,000 levels with 400 json_too_deep, signed in or not, and admits 64', async () => {
      for (const levels of [65, 1_000, 2_000, 100_000]) {
        const body = `{"email":"a@example.com","password":${deep(levels)}}`;
        const anonymous = await t.http().post('/api/v1/auth/login').set('Content-Type', 'application/json').send(body);
        expect([levels, anonymous.status, anonymous.body.code]).toEqual([levels, 400, 'json_too_deep']);
        const signedIn = await t
          .http()
          .put('/api/v1/org/settings')
          .set(world.ownerA)
          .set('Content-Type', 'application/json')
          .send(`{"name":${deep(levels)}}`);
        expect([levels, signedIn.status, signedIn.body.code]).toEqual([levels, 400, 'json_too_deep']);
      }
      const admitted = await t
        .http()
        .put('/api/v1/org/settings')
        .set(world.ownerA)
        .set('Content-Type', 'application/json')
        .send(`{"name":${deep(63)}}`);
      // 64 levels in all (the body object and 63 arrays): parsed, then refused by validation.
      expect([admitted.status, admitted.body.code]).toEqual([422, 'unprocessable_entity']);
    });

    it('answers compressed garbage with 400 for gzip, deflate and br, and reads a real gzip body', async () => {
      // fetch sends the bytes as they are (supertest would JSON-encode a Buffer).
      const post = (encoding: string, body: Uint8Array) =>
        fetch(`${client.baseUrl}/api/v1/auth/login`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'content-encoding': encoding },
          body,
        });
      for (const encoding of ['gzip', 'deflate', 'br']) {
        const response = await post(encoding, Buffer.from('this is not compressed at all'));
        const body = (await response.json()) as { error: string };
        expect([encoding, response.status, body.error]).toEqual([
          encoding,
          400,
          'The request body could not be decompressed',
        ]);
      }
      expect((await post('zstd-or-whatever', Buffer.from('{}'))).status).toBe(415);
      const credentials = JSON.stringify({ email: 'nobody@example.com', password: 'wrong-password' });
      for (const [encoding, compressed] of [
        ['gzip', gzipSync(credentials)],
        ['deflate', deflateSync(credentials)],
        ['br', brotliCompressSync(credentials)],
      ] as const) {
        const response = await post(encoding, compressed);
        const body = (await response.json()) as { code: string };
        expect([encoding, response.status, body.code]).toEqual([encoding, 401, 'invalid_credentials']);
      }
    });
  });

  describe('numbers the validator cannot represent', () => {
    it('refuses 1e-7 where 3 decimals are allowed, 1e309 and -0 with the field named, never 500', async () => {
      const rollout = (value: string) =>
        client.send('put', `/api/v1/dashboard/flags/${ids.flagId}/environments/staging`, {
          headers: world.ownerA,
          body: `{"enabled":true,"value":"true","rules":[{"name":"r","conditions":[],"value":"true","rolloutPercentage":${value}}]}`,
        });
      const answers = await Promise.all(['1e-7', '12.3456', '1e309', '-0'].map(rollout));
      expect(answers.map(refusal)).toEqual([
        'rules.0.rolloutPercentage: must be a number with at most 3 decimal places',
        'rules.0.rolloutPercentage: must be a number with at most 3 decimal places',
        'rules[0].rolloutPercentage: must be a finite number',
        'rules[0].rolloutPercentage: must not be negative zero',
      ]);
      const accepted = await rollout('12.345');
      expect(accepted.status).toBe(200);
    });
  });

  describe('defects the generator found, pinned by name', () => {
    it('refuses __proto__ and constructor keys in bodies and queries instead of silently dropping them', async () => {
      const before = await fingerprint(t, printQuery);
      const body = await client.send('post', '/api/v1/org/api-keys', {
        headers: world.ownerA,
        body: '{"name":"sneaky","scopes":["org:read"],"__proto__":{"isAdmin":true}}',
      });
      expect(refusal(body)).toBe('__proto__: should not exist');
      const nested = await client.send('put', `/api/v1/apps/${ids.appID}`, {
        headers: world.ownerA,
        body: { riskThresholds: { constructor: { prototype: { polluted: true } } } },
      });
      expect(refusal(nested)).toBe('riskThresholds.constructor: should not exist');
      const query = await client.send('get', '/api/v1/org/release-notes?__proto__=1', { headers: world.ownerA });
      expect(refusal(query)).toBe('__proto__: should not exist');
      expect(changedTables(before, await fingerprint(t, printQuery))).toEqual([]);
      expect(({} as Record<string, unknown>).isAdmin).toBeUndefined();
    });

    it('answers NUL characters and lone surrogates with 422 naming the field, never 500', async () => {
      const sdk = { 'x-bundle-id': world.appA.bundleId, 'x-team-id': 'ABCDE12345' };
      const cases = [
        client.send('get', '/api/v1/org/support?search=a%00b', { headers: world.ownerA }),
        client.send('get', '/api/v1/feedback/features?submitter_id=%00', { headers: sdk }),
        client.send('post', '/api/v1/auth/forgot-password', { body: '{"email":"a\\ud800@example.com"}' }),
        client.send('put', '/api/v1/org/settings', { headers: world.ownerA, body: '{"name":"lone \\udc00"}' }),
        client.send('post', `/api/v1/devices/a%00b/block`, { headers: world.ownerA, body: {} }),
      ];
      expect((await Promise.all(cases)).map(refusal)).toEqual([
        'search: must not contain NUL characters',
        'submitter_id: must not contain NUL characters',
        'email: must be valid Unicode text',
        'name: must be valid Unicode text',
        'keyId: must not contain NUL characters',
      ]);
    });

    it('refuses a rollback to a version beyond the 32-bit column with 422, not 500', async () => {
      const response = await client.send('post', `/api/v1/dashboard/flags/${ids.flagId}/rollback`, {
        headers: world.ownerA,
        body: { version: 2 ** 31 },
      });
      expect(refusal(response)).toMatch(/^version: must not be greater than 2147483647/);
    });

    it('refuses a claim test context whose device profile is not an object', async () => {
      const response = await client.send('post', `/api/v1/claims/${ids.claimID}/preview`, {
        headers: world.ownerA,
        body: { testContext: { deviceProfile: [] } },
      });
      expect(refusal(response)).toMatch(/^testContext\.deviceProfile: /);
    });

    it('names the token in the fields of the 422 for an invalid verification link', async () => {
      const response = await client.send('get', '/api/v1/auth/verify-email?token=not-a-real-token');
      expect(response.status).toBe(422);
      expect(envelopeProblem(response)).toBeNull();
      expect(response.body?.fields).toEqual([{ field: 'token', message: 'is invalid or has expired' }]);
    });
  });

  describe.each(routes.map((route) => [`${routeName(route)} (${describeAccess(route.access)})`, route] as const))(
    '%s',
    (_label, route) => {
      it('refuses generated bad input with a 4xx envelope, writes nothing, and never fails with 5xx', async () => {
        const headers = callerHeaders(route);
        const cases = casesOf(route);
        const problems: string[] = [];
        // Sign-ups and reset requests finish after their answer: wait for those of earlier routes.
        await afterAnswers(t);
        const before = await fingerprint(t, printQuery);
        for (const badCase of cases.filter((c) => c.expect === 'refused')) {
          const problem = problemWith(badCase, await send(route, headers, badCase));
          if (problem) problems.push(`${badCase.kind} (${badCase.what}): ${problem}`);
        }
        await afterAnswers(t);
        const written = changedTables(before, await fingerprint(t, printQuery));
        if (written.length) problems.push(`refused input changed rows of ${written.join(', ')}`);
        for (const badCase of cases.filter((c) => c.expect === 'edge')) {
          const problem = problemWith(badCase, await send(route, headers, badCase));
          if (problem) problems.push(`${badCase.kind} (${badCase.what}): ${problem}`);
        }
        expect(problems).toEqual([]);
      });
    },
  );
});
