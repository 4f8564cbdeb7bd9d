import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { UnsafeUrlError } from '../../common/ssrf-guard.js';
import { ResponseTooLargeError, guardedFetch } from './guarded-fetch.js';

describe('guardedFetch', () => {
  let server: Server;
  let base: string;
  const seen: { method: string; body: string; type: string | undefined }[] = [];

  beforeAll(async () => {
    server = createServer((request, response) => {
      let body = '';
      request.on('data', (chunk: Buffer) => (body += chunk.toString()));
      request.on('end', () => {
        seen.push({ method: request.method!, body, type: request.headers['content-type'] });
        if (request.url === '/big') return response.end(Buffer.alloc(600 * 1024, 'a'));
        if (request.url === '/redirect') {
          response.writeHead(302, { location: 'http://169.254.169.254/' });
          return response.end();
        }
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ ok: true }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('refuses loopback addresses and plain http unless private networks are allowed', async () => {
    await expect(guardedFetch(false)(`${base}/`, { method: 'GET', headers: {} })).rejects.toBeInstanceOf(
      UnsafeUrlError,
    );
    await expect(
      guardedFetch(false)(`https://127.0.0.1:${new URL(base).port}/`, { method: 'GET', headers: {} }),
    ).rejects.toBeInstanceOf(UnsafeUrlError);
    await expect(guardedFetch(false)('https://localhost.:1/', { method: 'GET', headers: {} })).rejects.toBeInstanceOf(
      UnsafeUrlError,
    );
  });

  it('answers a Fetch Response and sends form bodies as openid-client gives them', async () => {
    const response = await guardedFetch(true)(`${base}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'authorization_code', code: 'abc' }),
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ ok: true });
    expect(seen.at(-1)).toEqual({
      method: 'POST',
      body: 'grant_type=authorization_code&code=abc',
      type: 'application/x-www-form-urlencoded',
    });
  });

  it('does not follow redirects and stops reading past the size bound', async () => {
    const redirect = await guardedFetch(true)(`${base}/redirect`, { method: 'GET', headers: {} });
    expect(redirect.status).toBe(302);
    expect(redirect.headers.get('location')).toBe('http://169.254.169.254/');
    await expect(guardedFetch(true)(`${base}/big`, { method: 'GET', headers: {} })).rejects.toBeInstanceOf(
      ResponseTooLargeError,
    );
  });
});
