import { connect, constants, type ClientHttp2Session } from 'node:http2';
import { importPKCS8, SignJWT } from 'jose';
import type { KeyObject } from 'node:crypto';

export const APNS_PRODUCTION_ORIGIN = 'https://api.push.apple.com';
export const APNS_SANDBOX_ORIGIN = 'https://api.sandbox.push.apple.com';

/** APNs refuses provider tokens older than an hour and renewals more often than every 20 minutes. */
export const PROVIDER_TOKEN_LIFETIME_MS = 50 * 60_000;
const REQUEST_TIMEOUT_MS = 10_000;

export interface ApnsAnswer {
  readonly status: number;
  /** APNs' `reason` (`Unregistered`, `BadDeviceToken`, `TooManyRequests`, …) on a refusal. */
  readonly reason: string | null;
  readonly apnsId: string | null;
}

export interface ApnsRequest {
  readonly origin: string;
  readonly deviceToken: string;
  readonly providerToken: string;
  /** The app's bundle id. */
  readonly topic: string;
  readonly payload: string;
}

/** The ES256 provider token APNs takes in `authorization: bearer`: `kid` the key id, `iss` the team. */
export async function providerToken(privateKey: KeyObject | string, keyId: string, teamId: string): Promise<string> {
  const key = typeof privateKey === 'string' ? await importPKCS8(privateKey, 'ES256') : privateKey;
  return new SignJWT({}).setProtectedHeader({ alg: 'ES256', kid: keyId }).setIssuer(teamId).setIssuedAt().sign(key);
}

/**
 * Sends pushes over HTTP/2, one long-lived connection per origin as Apple asks (multiplexed
 * streams, not a connection per push). A connection that fails or is told to go away is
 * dropped and reopened on the next push.
 */
export class ApnsClient {
  private readonly sessions = new Map<string, ClientHttp2Session>();

  send(request: ApnsRequest): Promise<ApnsAnswer> {
    const session = this.session(request.origin);
    return new Promise<ApnsAnswer>((resolve, reject) => {
      const stream = session.request({
        [constants.HTTP2_HEADER_METHOD]: 'POST',
        [constants.HTTP2_HEADER_PATH]: `/3/device/${request.deviceToken}`,
        authorization: `bearer ${request.providerToken}`,
        'apns-topic': request.topic,
        'apns-push-type': 'alert',
        'apns-priority': '10',
        'content-type': 'application/json',
      });
      stream.setTimeout(REQUEST_TIMEOUT_MS, () => stream.close(constants.NGHTTP2_CANCEL));
      let status = 0;
      let apnsId: string | null = null;
      const chunks: Buffer[] = [];
      stream.on('response', (headers) => {
        status = Number(headers[constants.HTTP2_HEADER_STATUS]);
        const id = headers['apns-id'];
        apnsId = typeof id === 'string' ? id : null;
      });
      stream.on('data', (chunk: Buffer) => {
        if (chunks.length < 16) chunks.push(chunk);
      });
      stream.on('error', reject);
      stream.on('close', () => {
        if (status === 0) return reject(new Error('APNs closed the stream without an answer'));
        resolve({ status, apnsId, reason: reasonOf(Buffer.concat(chunks).toString('utf8')) });
      });
      stream.end(request.payload);
    });
  }

  close(): void {
    for (const session of this.sessions.values()) session.close();
    this.sessions.clear();
  }

  private session(origin: string): ClientHttp2Session {
    const open = this.sessions.get(origin);
    if (open && !open.closed && !open.destroyed) return open;
    const session = connect(origin);
    const forget = () => {
      if (this.sessions.get(origin) === session) this.sessions.delete(origin);
    };
    session.on('error', forget);
    session.on('goaway', forget);
    session.on('close', forget);
    // Idle connections do not keep the process alive.
    session.unref();
    this.sessions.set(origin, session);
    return session;
  }
}

function reasonOf(body: string): string | null {
  if (!body) return null;
  try {
    const parsed = JSON.parse(body) as { reason?: unknown };
    return typeof parsed.reason === 'string' ? parsed.reason.slice(0, 100) : null;
  } catch {
    return null;
  }
}
