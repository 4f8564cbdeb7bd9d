// The access matrix, generated from the application's own route table: every route, every kind of
// caller, and the outcome the route's @Access declaration promises. A route added without a
// declaration fails here; so does a guard that lets through (or refuses) a caller it should not.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { AccessGuard } from '../../src/auth/access.guard.js';
import { ConsoleClaimsKeyGuard } from '../../src/claims/console-claims-key.guard.js';
import { startTestApp, type TestApp } from '../harness/test-app.js';
import { buildWorld, CALLERS, expectedOutcome, type World } from '../support/caller-world.js';
import { recordGuardRefusals, type GuardRefusals } from '../support/guard-refusals.js';
import { listen, type ProbeClient, type ProbeResponse } from '../support/probe-client.js';
import { describeAccess, fillPath, routeName, routeTable, type Route } from '../support/route-table.js';
import { fabricatedRootEnv } from '../support/sdk-client.js';

const t: TestApp = await startTestApp(await fabricatedRootEnv());
const routes = routeTable(t.app);

/** Each caller only ends its own session here: one shared fresh world is enough. */
const ENDS_OWN_SESSION = new Set(['POST /api/v1/auth/logout', 'POST /api/v1/auth/clear-org']);
/** These delete an organization or an account: each caller that passes gets a world of its own. */
const DESTROYS_WORLD = new Set(['DELETE /api/v1/org', 'DELETE /api/v1/account']);

/** A 5xx other than the documented 503 of an unconfigured integration (Stripe). */
function failedInside(response: ProbeResponse): boolean {
  return response.status >= 500 && !(response.status === 503 && response.body?.code === 'service_unavailable');
}

describe('access matrix: every route against every kind of caller', () => {
  let client: ProbeClient;
  let world: World;
  let refusals: GuardRefusals;

  beforeAll(async () => {
    refusals = recordGuardRefusals([AccessGuard, ConsoleClaimsKeyGuard]);
    client = await listen(t);
    world = await buildWorld(t, client);
  }, 60_000);
  afterAll(async () => {
    refusals.restore();
    await client.close();
    await t.close();
  });

  it('reads the routes of every feature from the running application', () => {
    const names = new Set(routes.map(routeName));
    for (const expected of [
      'GET /api/v1/apps',
      'POST /api/v1/attestation/validate',
      'GET /api/v1/flags',
      'POST /ofrep/v1/evaluate/flags/:key',
      'GET /api/v1/org/webhooks',
      'DELETE /api/v1/org/members/:userId',
      'POST /api/v1/entitlements/events',
      'GET /api/v1/org/claims/:claimRef',
      'GET /api/v1/health',
      'GET /device',
    ]) {
      expect(names).toContain(expected);
    }
    expect(routes.length).toBeGreaterThan(140);
  });

  it('finds an access declaration on every route', () => {
    const undeclared = routes.filter((route) => !route.access).map(routeName);
    expect(undeclared).toEqual([]);
  });

  async function probe(route: Route, headers: Record<string, string>) {
    const path = fillPath(route, {}, (name) =>
      route.params.find((p) => p.name === name)?.uuid ? randomUUID() : 'probe',
    );
    const withBody = route.method === 'post' || route.method === 'put' || route.method === 'patch';
    return client.send(route.method, path, { headers, body: withBody ? {} : undefined });
  }

  describe.each(routes.map((route) => [`${routeName(route)} (${describeAccess(route.access)})`, route] as const))(
    '%s',
    (_label, route) => {
      it('answers each caller as its declaration says', async () => {
        const name = routeName(route);
        const mismatches: string[] = [];
        let shared: World | null = null;
        for (const caller of CALLERS) {
          const expected = expectedOutcome(route.access, route.guards, caller);
          let callerWorld = world;
          if (ENDS_OWN_SESSION.has(name)) callerWorld = shared ??= await buildWorld(t, client);
          else if (DESTROYS_WORLD.has(name) && expected === 'passes') callerWorld = await buildWorld(t, client);
          const response = await probe(route, callerWorld.headers.get(caller.name)!);
          const refusedBy = refusals.refusedBy(response.requestId);
          const seen = refusedBy
            ? `${response.status} from ${refusedBy}`
            : `${response.status}, not refused by a guard`;
          if (expected === 'passes') {
            if (refusedBy || failedInside(response)) mismatches.push(`${caller.name}: expected to pass, got ${seen}`);
          } else if (!refusedBy || response.status !== expected) {
            mismatches.push(`${caller.name}: expected ${expected} from the access layer, got ${seen}`);
          }
        }
        expect(mismatches).toEqual([]);
      });
    },
  );
});
