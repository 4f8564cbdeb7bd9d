// Bad input on every route that takes a body, path parameters or a query, generated with
// fast-check (fixed seed, 15 cases per route): the service answers a 4xx error envelope whose
// requestId is the X-Request-ID header, never a 5xx, and writes nothing for what it refuses.
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { SchedulerRegistry } from '@nestjs/schedule';
import { startTestApp, type TestApp } from '../harness/test-app.js';
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
    return { ...world.headers.get(name)!, 'x-device-id': 'probe-device' };
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
        const before = await fingerprint(t, printQuery);
        for (const badCase of cases.filter((c) => c.expect === 'refused')) {
          const problem = problemWith(badCase, await send(route, headers, badCase));
          if (problem) problems.push(`${badCase.kind} (${badCase.what}): ${problem}`);
        }
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
