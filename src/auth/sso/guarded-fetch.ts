import http from 'node:http';
import https from 'node:https';
import { checkedOutboundUrl, guardedLookup } from '../../common/ssrf-guard.js';

/** A discovery document, a key set or a token response: far below this. */
const MAX_RESPONSE_BYTES = 512 * 1024;

/** What `openid-client` hands its `customFetch`; only the parts used here. */
export interface OutboundFetchOptions {
  readonly method: string;
  readonly headers: Record<string, string>;
  readonly body?: unknown;
  readonly signal?: AbortSignal;
}

export class ResponseTooLargeError extends Error {
  override readonly name = 'ResponseTooLargeError';

  constructor() {
    super(`the response exceeds ${MAX_RESPONSE_BYTES} bytes`);
  }
}

/**
 * A Fetch-compatible function for calls to customer-chosen identity providers (discovery, key
 * set, token, userinfo): the webhooks' SSRF rule applies to the address actually connected to,
 * redirects are never followed, and the body is read up to a bound. `WEBHOOK_ALLOW_PRIVATE_NETWORKS`
 * admits private addresses and plain http exactly as it does for webhooks.
 */
export function guardedFetch(allowPrivateNetworks: boolean) {
  return async (url: string, options: OutboundFetchOptions): Promise<Response> => {
    const target = checkedOutboundUrl(url, allowPrivateNetworks);
    const body = requestBody(options.body);
    const client = target.protocol === 'https:' ? https : http;
    return new Promise<Response>((resolve, reject) => {
      const outgoing = client.request(
        target,
        {
          method: options.method,
          headers: body === undefined ? options.headers : { ...options.headers, 'content-length': body.length },
          lookup: guardedLookup(allowPrivateNetworks),
          signal: options.signal,
        },
        (incoming) => {
          const chunks: Buffer[] = [];
          let size = 0;
          incoming.on('data', (chunk: Buffer) => {
            size += chunk.length;
            if (size > MAX_RESPONSE_BYTES) {
              incoming.destroy();
              reject(new ResponseTooLargeError());
              return;
            }
            chunks.push(chunk);
          });
          incoming.on('error', reject);
          incoming.on('end', () => {
            const status = incoming.statusCode ?? 502;
            const headers = new Headers();
            for (const [name, value] of Object.entries(incoming.headers)) {
              if (value === undefined) continue;
              for (const item of Array.isArray(value) ? value : [value]) headers.append(name, item);
            }
            const nullBody = status === 204 || status === 205 || status === 304;
            resolve(new Response(nullBody ? null : Buffer.concat(chunks), { status, headers }));
          });
        },
      );
      outgoing.on('error', reject);
      outgoing.end(body);
    });
  };
}

function requestBody(body: unknown): Buffer | undefined {
  if (body === undefined || body === null) return undefined;
  if (typeof body === 'string') return Buffer.from(body);
  if (body instanceof URLSearchParams) return Buffer.from(body.toString());
  if (body instanceof Uint8Array) return Buffer.from(body);
  if (body instanceof ArrayBuffer) return Buffer.from(body);
  throw new TypeError('unsupported request body');
}
