import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from '@jest/globals';
import { postWebhook, type WebhookRequest } from './webhook-sender.js';

const servers: { close(): void }[] = [];
afterEach(() => {
  while (servers.length) servers.pop()!.close();
});

async function serve(
  handler: (request: IncomingMessage, response: ServerResponse, body: string) => void,
): Promise<{ url: string; requests: number }> {
  const state = { url: '', requests: 0 };
  const server: Server = createServer((request, response) => {
    state.requests++;
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => handler(request, response, Buffer.concat(chunks).toString('utf8')));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  servers.push({
    close: () => {
      server.closeAllConnections();
      server.close();
    },
  });
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  return state;
}

function send(url: string, overrides: Partial<WebhookRequest> = {}) {
  return postWebhook({
    url,
    body: '{"data":{},"event":"device.new","timestamp":"2025-01-01T00:00:00.000Z"}',
    headers: { 'Content-Type': 'application/json', 'X-Service-Signature': 'sha256=abc' },
    timeoutMs: 2_000,
    allowPrivateNetworks: true,
    ...overrides,
  });
}

describe('postWebhook', () => {
  it('POSTs the exact body with the given headers and reports a 2xx as success', async () => {
    let seen: { method?: string; body?: string; signature?: string | string[]; type?: string } = {};
    const target = await serve((request, response, body) => {
      seen = {
        method: request.method,
        body,
        signature: request.headers['x-service-signature'],
        type: request.headers['content-type'],
      };
      response.writeHead(204).end();
    });
    const result = await send(target.url);
    expect(result).toMatchObject({ statusCode: 204, responseBody: '', error: null });
    expect(result.latencyMs).toBeGreaterThanOrEqual(0);
    expect(seen).toEqual({
      method: 'POST',
      body: '{"data":{},"event":"device.new","timestamp":"2025-01-01T00:00:00.000Z"}',
      signature: 'sha256=abc',
      type: 'application/json',
    });
  });

  it('keeps the first 1000 characters of the response body and fails a non-2xx', async () => {
    const target = await serve((_request, response) => response.writeHead(500).end('é'.repeat(3000)));
    const result = await send(target.url);
    expect(result.statusCode).toBe(500);
    expect(result.error).toBe('endpoint answered 500');
    expect(result.responseBody).toBe('é'.repeat(1000));
  });

  it('does not follow redirects', async () => {
    const target = await serve((_request, response) =>
      response.writeHead(302, { Location: 'http://127.0.0.1:1/' }).end(),
    );
    expect(await send(target.url)).toMatchObject({ statusCode: 302, error: 'endpoint answered 302' });
  });

  it('gives up on an endpoint that does not answer within the timeout', async () => {
    const target = await serve(() => undefined);
    const result = await send(target.url, { timeoutMs: 300 });
    expect(result.statusCode).toBeNull();
    expect(result.error).toMatch(/^timeout/);
    expect(result.latencyMs).toBeGreaterThanOrEqual(290);
    expect(result.latencyMs).toBeLessThan(2_000);
  });

  it('reports a refused connection', async () => {
    const target = await serve((_request, response) => response.end());
    servers.pop()!.close();
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect((await send(target.url)).error).toBe('connection refused');
  });

  describe('without WEBHOOK_ALLOW_PRIVATE_NETWORKS', () => {
    async function listener(): Promise<{ port: number; connections: () => number }> {
      let connections = 0;
      const server = createNetServer((socket) => {
        connections++;
        socket.destroy();
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      servers.push(server);
      return { port: (server.address() as AddressInfo).port, connections: () => connections };
    }

    it('refuses http:// before connecting', async () => {
      const target = await listener();
      const result = await send(`http://127.0.0.1:${target.port}/`, { allowPrivateNetworks: false });
      expect(result.error).toBe('refused: URL must be an https URL of a publicly reachable host');
      expect(target.connections()).toBe(0);
    });

    it('refuses a loopback address literal before connecting', async () => {
      const target = await listener();
      const result = await send(`https://127.0.0.1:${target.port}/`, { allowPrivateNetworks: false });
      expect(result.error).toBe('refused: URL must be an https URL of a publicly reachable host');
      expect(target.connections()).toBe(0);
    });

    it('refuses a host name that resolves to a private address, at connection time', async () => {
      const target = await listener();
      const result = await send(`https://localhost:${target.port}/`, { allowPrivateNetworks: false });
      expect(result.error).toBe('refused: URL must be an https URL of a publicly reachable host');
      expect(result.statusCode).toBeNull();
      expect(target.connections()).toBe(0);
    });
  });
});
