import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import type { ClaimDefinition, DeviceContext, ExternalConfig } from './claim-types.js';
import { ExternalClaimFetcher, MAX_RESPONSE_BYTES } from './external-claim-fetcher.js';

interface RecordedRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  headers: IncomingMessage['headers'];
  body: string;
}

const requests: RecordedRequest[] = [];
const hits = new Map<string, number>();
let server: Server;
let base: string;

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(typeof body === 'string' ? body : JSON.stringify(body));
}

/** Routes the fake upstream serves; `hits` counts calls per path. */
function route(request: RecordedRequest, res: ServerResponse): void {
  const count = (hits.get(request.path) ?? 0) + 1;
  hits.set(request.path, count);
  switch (request.path) {
    case '/echo':
      return send(res, 200, {
        method: request.method,
        query: request.query,
        headers: request.headers,
        body: request.body,
      });
    case '/profile':
      return send(res, 200, {
        data: { tier: 'gold', score: 0.82, tags: ['a', 'b'], nothing: null },
        items: [{ id: 1 }, { id: 2 }],
      });
    case '/counter':
      return send(res, 200, { n: count });
    case '/flaky':
      return count <= 2 ? send(res, 502, { error: 'bad gateway' }) : send(res, 200, { ok: 'finally' });
    case '/missing':
      return send(res, 404, { error: 'no such device' });
    case '/moved':
      res.writeHead(302, { location: '/profile' });
      return void res.end();
    case '/text':
      res.writeHead(200, { 'content-type': 'text/plain' });
      return void res.end('hello');
    case '/huge':
      return send(res, 200, JSON.stringify({ blob: 'x'.repeat(MAX_RESPONSE_BYTES) }));
    case '/hang':
      return; // never answers
    case '/token': {
      const form = Object.fromEntries(new URLSearchParams(request.body));
      if (form.grant_type !== 'client_credentials' || form.client_id !== 'app' || form.client_secret !== 's3cret') {
        return send(res, 401, { error: 'invalid_client' });
      }
      return send(res, 200, { access_token: `token-${count}`, token_type: 'Bearer', expires_in: 3600 });
    }
    default:
      return send(res, 404, {});
  }
}

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://localhost');
      const recorded = {
        method: req.method ?? '',
        path: url.pathname,
        query: Object.fromEntries(url.searchParams),
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      requests.push(recorded);
      route(recorded, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

beforeEach(() => {
  requests.length = 0;
  hits.clear();
});

const device: DeviceContext = {
  keyId: 'key-1',
  deviceModel: 'iPhone "Pro"\n15',
  riskScore: 12,
  attestationCount: 3,
  jailbreakDetected: false,
  additionalData: { plan: 'gold & more' },
};

let clock = Date.UTC(2025, 0, 1);
const now = (): number => clock;

function fetcher(options: { allowPrivateNetworks?: boolean; fetch?: typeof fetch } = {}): ExternalClaimFetcher {
  return new ExternalClaimFetcher({
    allowPrivateNetworks: options.allowPrivateNetworks ?? true,
    fetch: options.fetch,
    now,
  });
}

let nextId = 0;
function claim(path: string, config: Partial<ExternalConfig> = {}): Pick<ClaimDefinition, 'id' | 'externalConfig'> {
  nextId += 1;
  return {
    id: `claim-${nextId}`,
    externalConfig: {
      endpoint: `${base}${path}`,
      method: 'GET',
      responseMapping: { jsonPath: '$' },
      timeoutSeconds: 2,
      ...config,
    },
  };
}

describe('building the request', () => {
  it('sends method, headers, query parameters and a JSON-escaped body template', async () => {
    const echoed = await fetcher().resolve(
      claim('/echo?fixed=1', {
        method: 'POST',
        headers: { 'X-Tenant': 'acme' },
        queryParameters: { device: '{{device.keyId}}', plan: '{{ data.plan }}' },
        bodyTemplate:
          '{"key":"{{device.keyId}}","model":"{{device.model}}","risk":{{device.riskScore}},"country":"{{device.country}}"}',
      }),
      device,
    );
    expect(echoed).toMatchObject({
      method: 'POST',
      query: { fixed: '1', device: 'key-1', plan: 'gold & more' },
      headers: { 'x-tenant': 'acme', 'content-type': 'application/json', accept: 'application/json' },
    });
    const body = JSON.parse((echoed as { body: string }).body);
    expect(body).toEqual({ key: 'key-1', model: 'iPhone "Pro"\n15', risk: 12, country: '' });
  });

  it('uses the injected fetch', async () => {
    let calls = 0;
    const counting: typeof fetch = (input, init) => {
      calls += 1;
      return fetch(input, init);
    };
    await fetcher({ fetch: counting }).resolve(claim('/profile'), device);
    expect(calls).toBe(1);
  });
});

describe('authentication', () => {
  const headersWith = async (authentication: ExternalConfig['authentication']) => {
    const echoed = await fetcher().resolve(claim('/echo', { authentication }), device);
    return (echoed as { headers: Record<string, string> }).headers;
  };

  it('sends basic credentials', async () => {
    const headers = await headersWith({ type: 'basic', credentials: { username: 'ann', password: 'pä:ss' } });
    expect(Buffer.from(headers.authorization.replace('Basic ', ''), 'base64').toString('utf8')).toBe('ann:pä:ss');
  });

  it('sends a bearer token', async () => {
    expect((await headersWith({ type: 'bearer', credentials: { token: 'abc' } })).authorization).toBe('Bearer abc');
  });

  it('sends an API key in X-API-Key unless the credentials name a header', async () => {
    expect((await headersWith({ type: 'api_key', credentials: { apiKey: 'k1' } }))['x-api-key']).toBe('k1');
    const custom = await headersWith({ type: 'api_key', credentials: { api_key: 'k2', header: 'X-Partner-Key' } });
    expect(custom['x-partner-key']).toBe('k2');
    expect(custom['x-api-key']).toBeUndefined();
  });

  it('obtains an OAuth2 client-credentials token and reuses it until it expires', async () => {
    const shared = fetcher();
    const authentication = {
      type: 'oauth2' as const,
      credentials: { tokenUrl: `${base}/token`, client_id: 'app', client_secret: 's3cret', scope: 'claims:read' },
    };
    const first = await shared.resolve(claim('/echo', { authentication }), device);
    const second = await shared.resolve(claim('/echo', { authentication }), device);
    expect((first as { headers: Record<string, string> }).headers.authorization).toBe('Bearer token-1');
    expect((second as { headers: Record<string, string> }).headers.authorization).toBe('Bearer token-1');
    const tokenRequest = requests.find((r) => r.path === '/token');
    expect(tokenRequest?.method).toBe('POST');
    expect(Object.fromEntries(new URLSearchParams(tokenRequest?.body))).toEqual({
      grant_type: 'client_credentials',
      client_id: 'app',
      client_secret: 's3cret',
      scope: 'claims:read',
    });
    expect(hits.get('/token')).toBe(1);

    clock += 3600 * 1000;
    const third = await shared.resolve(claim('/echo', { authentication }), device);
    expect((third as { headers: Record<string, string> }).headers.authorization).toBe('Bearer token-2');
  });

  it('fails the claim when the token endpoint refuses the client', async () => {
    const authentication = {
      type: 'oauth2' as const,
      credentials: { tokenUrl: `${base}/token`, clientId: 'app', clientSecret: 'wrong' },
    };
    await expect(fetcher().resolve(claim('/echo', { authentication }), device)).rejects.toThrow(
      'token endpoint answered 401',
    );
    expect(hits.get('/echo')).toBeUndefined();
  });
});

describe('mapping the response', () => {
  const mapped = (responseMapping: ExternalConfig['responseMapping']) =>
    fetcher().resolve(claim('/profile', { responseMapping }), device);

  it('extracts the JSONPath match', async () => {
    await expect(mapped({ jsonPath: '$.data.tier' })).resolves.toBe('gold');
    await expect(mapped({ jsonPath: '$.data.tags' })).resolves.toEqual(['a', 'b']);
    await expect(mapped({ jsonPath: '$.items[*].id' })).resolves.toEqual([1, 2]);
  });

  it('falls back to defaultValue when nothing (or null) matches', async () => {
    await expect(mapped({ jsonPath: '$.data.level', defaultValue: 'bronze' })).resolves.toBe('bronze');
    await expect(mapped({ jsonPath: '$.data.nothing', defaultValue: 'bronze' })).resolves.toBe('bronze');
    await expect(mapped({ jsonPath: '$.data.level' })).resolves.toBeNull();
  });

  it('applies transformExpression to a match, with value bound', async () => {
    await expect(
      mapped({ jsonPath: '$.data.tier', transformExpression: "upper(value) + '-' + device.keyId" }),
    ).resolves.toBe('GOLD-key-1');
    await expect(mapped({ jsonPath: '$.data.score', transformExpression: 'round(value * 100)' })).resolves.toBe(82);
    await expect(mapped({ jsonPath: '$.data', transformExpression: 'value.tier' })).resolves.toBe('gold');
  });

  it('refuses responses that are not JSON or too large', async () => {
    await expect(fetcher().resolve(claim('/text'), device)).rejects.toThrow('response is not JSON');
    await expect(fetcher().resolve(claim('/huge'), device)).rejects.toThrow('larger than');
  });
});

describe('caching', () => {
  it('serves a value from the cache for cacheSeconds, per claim and device', async () => {
    const shared = fetcher();
    const cached = claim('/counter', { cacheSeconds: 60, responseMapping: { jsonPath: '$.n' } });
    await expect(shared.resolve(cached, device)).resolves.toBe(1);
    clock += 59_000;
    await expect(shared.resolve(cached, device)).resolves.toBe(1);
    await expect(shared.resolve(cached, { ...device, keyId: 'key-2' })).resolves.toBe(2);
    clock += 2_000;
    await expect(shared.resolve(cached, device)).resolves.toBe(3);
    expect(hits.get('/counter')).toBe(3);
  });

  it('fetches every time without cacheSeconds', async () => {
    const shared = fetcher();
    const uncached = claim('/counter', { responseMapping: { jsonPath: '$.n' } });
    await shared.resolve(uncached, device);
    await expect(shared.resolve(uncached, device)).resolves.toBe(2);
  });

  it('does not serve a value fetched for an older version of the claim', async () => {
    const shared = fetcher();
    const before = claim('/counter', { cacheSeconds: 60, responseMapping: { jsonPath: '$.n' } });
    await shared.resolve(before, device);
    const edited = {
      ...before,
      externalConfig: {
        ...before.externalConfig!,
        responseMapping: { jsonPath: '$.n', transformExpression: 'value * 10' },
      },
    };
    await expect(shared.resolve(edited, device)).resolves.toBe(20);
  });
});

describe('failures, timeouts and retries', () => {
  it('gives up after timeoutSeconds on a hanging server, without retrying', async () => {
    const started = Date.now();
    await expect(fetcher().resolve(claim('/hang', { timeoutSeconds: 1, retryCount: 2 }), device)).rejects.toThrow(
      'did not answer within 1 s',
    );
    expect(Date.now() - started).toBeLessThan(1900);
    expect(hits.get('/hang')).toBe(1);
  });

  it('retries 5xx answers up to retryCount', async () => {
    await expect(
      fetcher().resolve(claim('/flaky', { retryCount: 2, responseMapping: { jsonPath: '$.ok' } }), device),
    ).resolves.toBe('finally');
    expect(hits.get('/flaky')).toBe(3);
  });

  it('reports the last failure when retries run out', async () => {
    await expect(fetcher().resolve(claim('/flaky', { retryCount: 1 }), device)).rejects.toThrow(
      'endpoint answered 502 (2 attempts)',
    );
    expect(hits.get('/flaky')).toBe(2);
  });

  it('retries connection failures', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    let calls = 0;
    const counting: typeof fetch = (input, init) => {
      calls += 1;
      return fetch(input, init);
    };
    const unreachable = {
      id: 'c',
      externalConfig: {
        endpoint: `http://127.0.0.1:${port}/`,
        method: 'GET' as const,
        responseMapping: { jsonPath: '$' },
        retryCount: 2,
      },
    };
    await expect(fetcher({ fetch: counting }).resolve(unreachable, device)).rejects.toThrow(
      'request failed: ECONNREFUSED (3 attempts)',
    );
    expect(calls).toBe(3);
  });

  it('does not retry 4xx answers or follow redirects', async () => {
    await expect(fetcher().resolve(claim('/missing', { retryCount: 3 }), device)).rejects.toThrow(
      'endpoint answered 404',
    );
    expect(hits.get('/missing')).toBe(1);
    await expect(fetcher().resolve(claim('/moved'), device)).rejects.toThrow('redirects are not followed');
    expect(hits.get('/profile')).toBeUndefined();
  });

  it('refuses private addresses and plain http unless private networks are allowed', async () => {
    await expect(fetcher({ allowPrivateNetworks: false }).resolve(claim('/profile'), device)).rejects.toThrow(
      'externalConfig.endpoint: must use https',
    );
    const https = {
      id: 'c',
      externalConfig: { endpoint: 'https://localhost:1/', method: 'GET' as const, responseMapping: { jsonPath: '$' } },
    };
    await expect(fetcher({ allowPrivateNetworks: false }).resolve(https, device)).rejects.toThrow(
      'endpoint refused: URL must be an https URL of a publicly reachable host',
    );
    expect(requests).toHaveLength(0);
  });

  it('refuses a stored configuration that is not valid', async () => {
    await expect(fetcher().resolve({ id: 'c', externalConfig: null }, device)).rejects.toThrow(
      'externalConfig: must be an object',
    );
  });
});
