import { describe, expect, it } from '@jest/globals';
import { Counter, Histogram, Registry } from 'prom-client';
import { RequestLatencyHistogram, requestCountsOf } from './request-latency.js';

const BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const NAME = 'test_http_request_duration_seconds';
const HELP = 'Time to answer';

/** prom-client's own histogram and counter, fed as the service fed them before. */
function reference() {
  const registry = new Registry();
  const latency = new Histogram({
    name: NAME,
    help: HELP,
    labelNames: ['method', 'route', 'status'],
    buckets: BUCKETS,
    registers: [registry],
  });
  const requests = new Counter({
    name: 'test_http_requests_total',
    help: 'Requests',
    labelNames: ['method', 'route', 'status'],
    registers: [registry],
  });
  return {
    registry,
    record(method: string, route: string, status: number, seconds: number) {
      const labels = { method, route, status: String(status) };
      latency.observe(labels, seconds);
      requests.inc(labels);
    },
  };
}

/** The service's histogram, with the counter read from it as src/metrics/metrics.ts reads it (`requestCountsOf`). */
function ours() {
  const registry = new Registry();
  const latency = new RequestLatencyHistogram({ name: NAME, help: HELP, buckets: BUCKETS, registers: [registry] });
  new Counter({
    name: 'test_http_requests_total',
    help: 'Requests',
    labelNames: ['method', 'route', 'status'],
    registers: [registry],
    collect: requestCountsOf(() => latency),
  });
  return { registry, latency, record: latency.record.bind(latency) };
}

// Durations on a bound (a bucket counts up to and including it), between bounds, below the first
// and beyond the last; several label sets, one of them a route with characters to escape.
const REQUESTS: Array<[string, string, number, number]> = [
  ['GET', '/health', 200, 0.001],
  ['GET', '/health', 200, 0.0004],
  ['GET', '/health', 200, 0.0031],
  ['GET', '/api/v1/flags', 304, 0.25],
  ['GET', '/api/v1/flags', 200, 12.5],
  ['POST', '/api/v1/attestation/refresh', 429, 0.0099],
  ['GET', 'unmatched', 404, 0],
  ['GET', '/health', 200, 10],
  ['GET', '/a "quoted" \\ route\nline', 200, 0.7],
  ['POST', '/api/v1/attestation/refresh', 200, 0.0125],
];

describe('RequestLatencyHistogram', () => {
  it('renders exactly what prom-client renders for the same requests, counter included', async () => {
    const expected = reference();
    const actual = ours();
    for (const request of REQUESTS) {
      expected.record(...request);
      actual.record(...request);
    }
    expect(await actual.registry.metrics()).toBe(await expected.registry.metrics());
    expect(await actual.registry.getMetricsAsJSON()).toEqual(await expected.registry.getMetricsAsJSON());
  });

  it('renders an empty series as prom-client does, and forgets everything on reset', async () => {
    const expected = reference();
    const actual = ours();
    expect(await actual.registry.metrics()).toBe(await expected.registry.metrics());
    actual.record('GET', '/health', 200, 0.002);
    actual.registry.resetMetrics();
    expect(await actual.registry.metrics()).toBe(await expected.registry.metrics());
  });

  it('counts a label set once per request, whatever the order of arrival', () => {
    const actual = ours();
    for (let i = 0; i < 1000; i++) actual.record(i % 2 ? 'GET' : 'POST', '/x', 200 + (i % 3), (i % 7) / 100);
    const counts = [...actual.latency.counts()].reduce((sum, { count }) => sum + count, 0);
    expect(counts).toBe(1000);
    expect([...actual.latency.counts()]).toHaveLength(6);
  });

  it('refuses a duration that is not a finite number, and the generic observe', () => {
    const actual = ours();
    expect(() => actual.record('GET', '/health', 200, Number.NaN)).toThrow(TypeError);
    expect(() => actual.latency.observe({ method: 'GET', route: '/health', status: '200' }, 1)).toThrow(/record\(\)/);
  });
});
