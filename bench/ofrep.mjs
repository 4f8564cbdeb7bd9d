// OpenFeature (issue 34, decision 0071): OFREP bulk evaluation, POST /ofrep/v1/evaluate/flags,
// beside GET /api/v1/flags, measured one after the other in the same run on the same apps (50
// flags, 5 rules each), devices and context: the ratio says what the OFREP answer (a reason,
// variant and metadata per flag, from the kernel's traced evaluation) costs over the SDK's own.
import { roundTheFlagApps } from './scenarios.mjs';
import { requestsPerSecond } from './server.mjs';

/**
 * `load(baseUrl, scenario)` is bench/run.mjs's autocannon run; `context` the scenarios' fixtures
 * (`flagGroup()`: the flag apps for a load, each with a device token). Each request goes round
 * the apps of a group of its own, so no app's plan bucket runs out during the run.
 */
export async function measureOfrepBulk({ context, load }) {
  const round = async (method, vary) => roundTheFlagApps(await context.flagGroup(), method, vary);
  // The same device (the token's subject) and attributes on both routes.
  const withoutContextHeaders = (headers) =>
    Object.fromEntries(Object.entries(headers).filter(([name]) => name !== 'x-app-version'));
  const body = JSON.stringify({ context: { appVersion: '3.1.0', country: 'DE' } });
  const flags = await load(
    context.baseUrl,
    await round('GET', (client) => ({
      path: '/api/v1/flags',
      headers: { ...withoutContextHeaders(client.headers), 'x-app-version': '3.1.0', 'x-country': 'DE' },
    })),
  );
  const ofrep = await load(
    context.baseUrl,
    await round('POST', (client) => ({
      path: '/ofrep/v1/evaluate/flags',
      headers: { ...withoutContextHeaders(client.headers), 'content-type': 'application/json' },
      body,
    })),
  );
  const row = (result) => ({
    requestsPerSecond: requestsPerSecond(result),
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
  });
  const measured = { flags: row(flags), ofrep: row(ofrep) };
  return {
    ...measured,
    ratio: Math.round((measured.ofrep.requestsPerSecond / measured.flags.requestsPerSecond) * 100) / 100,
  };
}
