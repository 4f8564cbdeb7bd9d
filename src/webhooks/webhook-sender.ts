import http from 'node:http';
import https from 'node:https';
import { performance } from 'node:perf_hooks';
import { UnsafeUrlError, checkedOutboundUrl, guardedLookup } from '../common/ssrf-guard.js';

/** The documented part of a delivery's response kept per attempt. */
export const RECORDED_BODY_CHARACTERS = 1000;
/** Enough bytes for 1000 characters of any UTF-8 text; the rest of the body is not read. */
const READ_BYTES = RECORDED_BODY_CHARACTERS * 4;

export interface WebhookRequest {
  url: string;
  body: string;
  headers: Record<string, string>;
  /** Connect, send and response together must finish within this. */
  timeoutMs: number;
  /** WEBHOOK_ALLOW_PRIVATE_NETWORKS: admits http:// and non-public addresses. */
  allowPrivateNetworks: boolean;
}

export interface WebhookResponse {
  /** Null when no response arrived. */
  statusCode: number | null;
  /** The first 1000 characters of the response body; null when no response arrived. */
  responseBody: string | null;
  error: string | null;
  latencyMs: number;
}

/** Idle sockets close before the usual 5 s server keep-alive, so a reused socket is rarely stale. */
const agents = {
  http: new http.Agent({ keepAlive: true, maxSockets: 64, timeout: 4_000 }),
  https: new https.Agent({ keepAlive: true, maxSockets: 64, timeout: 4_000 }),
};

/**
 * POSTs one webhook. The SSRF rule is applied to the address actually connected to: host names
 * resolve through `guardedLookup`, and address literals are checked before connecting.
 * Redirects are not followed (a 3xx is a failed attempt). Never throws.
 */
export async function postWebhook(request: WebhookRequest): Promise<WebhookResponse> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  let url: URL;
  try {
    url = checkedOutboundUrl(request.url, request.allowPrivateNetworks);
  } catch (error) {
    return { statusCode: null, responseBody: null, error: describeError(error), latencyMs: elapsed() };
  }
  const client = url.protocol === 'https:' ? https : http;
  return new Promise<WebhookResponse>((resolve) => {
    let settled = false;
    const finish = (outcome: Omit<WebhookResponse, 'latencyMs'>) => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      resolve({ ...outcome, latencyMs: elapsed() });
    };
    const outgoing = client.request(
      url,
      {
        method: 'POST',
        headers: { ...request.headers, 'Content-Length': String(Buffer.byteLength(request.body)) },
        lookup: guardedLookup(request.allowPrivateNetworks),
        agent: url.protocol === 'https:' ? agents.https : agents.http,
      },
      (response) => {
        const chunks: Buffer[] = [];
        let size = 0;
        const done = () => {
          // PostgreSQL text cannot hold NUL: a receiver answering one would leave the attempt
          // unrecordable, and the delivery retried forever.
          const text = Buffer.concat(chunks)
            .toString('utf8')
            .slice(0, RECORDED_BODY_CHARACTERS)
            .replaceAll('\u0000', '\uFFFD');
          const statusCode = response.statusCode ?? null;
          const error =
            statusCode !== null && statusCode >= 200 && statusCode < 300 ? null : `endpoint answered ${statusCode}`;
          finish({ statusCode, responseBody: text, error });
        };
        response.on('data', (chunk: Buffer) => {
          chunks.push(chunk);
          size += chunk.length;
          if (size >= READ_BYTES) {
            done();
            response.destroy();
          }
        });
        response.on('end', done);
        response.on('error', (error) => finish({ statusCode: null, responseBody: null, error: describeError(error) }));
      },
    );
    const deadline = setTimeout(() => {
      finish({
        statusCode: null,
        responseBody: null,
        error: `timeout: no complete response within ${request.timeoutMs} ms`,
      });
      outgoing.destroy();
    }, request.timeoutMs);
    outgoing.on('error', (error) => finish({ statusCode: null, responseBody: null, error: describeError(error) }));
    outgoing.end(request.body);
  });
}

const NETWORK_ERRORS: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset by the endpoint',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host could not be resolved (temporary DNS failure)',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  EPIPE: 'connection closed by the endpoint',
};

function describeError(error: unknown): string {
  if (error instanceof UnsafeUrlError) return `refused: ${error.message}`;
  const code = (error as NodeJS.ErrnoException | null)?.code;
  if (code && NETWORK_ERRORS[code]) return NETWORK_ERRORS[code];
  return error instanceof Error ? error.message : String(error);
}
