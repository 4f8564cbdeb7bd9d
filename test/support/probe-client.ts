// A plain fetch client for a listening test app. The robustness tests send thousands of requests,
// some of which open event streams: fetch hands back the status and headers before the body, so a
// stream is read no further than its headers.
import type { AddressInfo } from 'node:net';
import { SESSION_COOKIE } from '../../src/common/http/session-cookie.js';
import type { TestApp } from '../harness/test-app.js';

export interface ProbeRequest {
  readonly headers?: Record<string, string>;
  /** Sent as JSON unless it is a string (sent as is, with the given or a JSON content type). */
  readonly body?: unknown;
  /** Aborts the request after this long (default 10 s): a hang fails the test instead of stalling it. */
  readonly timeoutMs?: number;
}

export interface ProbeResponse {
  readonly status: number;
  readonly headers: Headers;
  /** Parsed JSON, or null when the body is not JSON (or an event stream, left unread). */
  readonly body: Record<string, unknown> | null;
  readonly text: string;
  readonly requestId: string | null;
}

export interface ProbeClient {
  readonly baseUrl: string;
  send(method: string, path: string, request?: ProbeRequest): Promise<ProbeResponse>;
  close(): Promise<void>;
}

let clientAddressSequence = 0;

/** A fresh client address for each request, so per-IP limits never meet the probes. */
export function nextClientAddress(): string {
  const n = ++clientAddressSequence;
  return `10.${200 + ((n >> 16) & 31)}.${(n >> 8) & 255}.${n & 255}`;
}

/** Makes the test app listen on an ephemeral loopback port and returns a client for it. */
export async function listen(t: TestApp): Promise<ProbeClient> {
  const server = t.app.getHttpServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    ...probeClient(`http://127.0.0.1:${port}`),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections?.();
        server.close(() => resolve());
      }),
  };
}

/** A client for a service at `baseUrl` (a spawned process, say). */
export function probeClient(baseUrl: string): ProbeClient {
  return {
    baseUrl,
    send: (method, path, request = {}) => send(baseUrl, method, path, request),
    close: () => Promise.resolve(),
  };
}

async function send(baseUrl: string, method: string, path: string, request: ProbeRequest): Promise<ProbeResponse> {
  const headers: Record<string, string> = { 'x-forwarded-for': nextClientAddress(), ...request.headers };
  let body: string | undefined;
  if (request.body !== undefined) {
    body = typeof request.body === 'string' ? request.body : JSON.stringify(request.body);
    headers['content-type'] ??= 'application/json';
  }
  const response = await fetch(`${baseUrl}${path}`, {
    method: method.toUpperCase(),
    headers,
    body,
    redirect: 'manual',
    signal: AbortSignal.timeout(request.timeoutMs ?? 10_000),
  });
  const requestId = response.headers.get('x-request-id');
  if (response.headers.get('content-type')?.includes('text/event-stream')) {
    await response.body?.cancel();
    return { status: response.status, headers: response.headers, body: null, text: '', requestId };
  }
  const text = await response.text();
  let parsed: Record<string, unknown> | null = null;
  if (response.headers.get('content-type')?.includes('json')) {
    try {
      parsed = JSON.parse(text) as Record<string, unknown>;
    } catch {
      parsed = null;
    }
  }
  return { status: response.status, headers: response.headers, body: parsed, text, requestId };
}

/** The session cookie a response set (`name=value`), or null. */
export function sessionCookie(response: ProbeResponse): string | null {
  for (const line of response.headers.getSetCookie()) {
    const pair = line.split(';')[0];
    if (pair.startsWith(`${SESSION_COOKIE}=`)) return pair;
  }
  return null;
}

/** Whether `response` is the documented error envelope, its requestId equal to the header. */
export function envelopeProblem(response: ProbeResponse): string | null {
  const body = response.body;
  if (!body) return `no JSON body (${response.headers.get('content-type') ?? 'no content type'})`;
  if (typeof body.error !== 'string' || body.error === '') return 'no error message';
  if (typeof body.code !== 'string' || !/^[a-z][a-z0-9_]*$/.test(body.code)) return `bad code ${String(body.code)}`;
  if (!response.requestId || body.requestId !== response.requestId) return 'requestId differs from X-Request-ID';
  if (response.status === 422 && !Array.isArray(body.fields)) return '422 without fields';
  return null;
}
