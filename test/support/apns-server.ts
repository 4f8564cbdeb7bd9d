// A local server speaking the APNs provider API (HTTP/2, h2c) on 127.0.0.1: it checks the
// provider token as APNs does (ES256 JWT, `kid` = key id, `iss` = team, signed by the .p8 key)
// and answers each device token as the test scripts it (default 200 with an apns-id).
import { randomUUID, type KeyObject } from 'node:crypto';
import { createServer, constants, type Http2Server, type ServerHttp2Stream } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { decodeProtectedHeader, jwtVerify } from 'jose';

export interface ReceivedPush {
  readonly deviceToken: string;
  readonly topic: string | undefined;
  readonly pushType: string | undefined;
  readonly payload: Record<string, unknown>;
  readonly payloadBytes: number;
  /** The provider token verified against the key and ids the server was given. */
  readonly providerTokenValid: boolean;
  readonly providerToken: string;
}

export interface ScriptedAnswer {
  readonly status: number;
  readonly reason?: string;
}

export interface ApnsServer {
  readonly url: string;
  readonly received: ReceivedPush[];
  /** Answers for the next pushes to `deviceToken`, in order; then 200. */
  script(deviceToken: string, ...answers: ScriptedAnswer[]): void;
  close(): Promise<void>;
}

export async function startApnsServer(expected: {
  publicKey: KeyObject;
  keyId: string;
  teamId: string;
}): Promise<ApnsServer> {
  const received: ReceivedPush[] = [];
  const scripts = new Map<string, ScriptedAnswer[]>();
  const server: Http2Server = createServer();
  server.on('stream', (stream: ServerHttp2Stream, headers) => {
    const chunks: Buffer[] = [];
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.on('end', () => {
      void (async () => {
        const path = String(headers[constants.HTTP2_HEADER_PATH] ?? '');
        const match = /^\/3\/device\/([0-9a-f]+)$/.exec(path);
        const answer = (status: number, reason?: string) => {
          stream.respond({ ':status': status, 'apns-id': randomUUID(), 'content-type': 'application/json' });
          stream.end(reason ? JSON.stringify({ reason }) : undefined);
        };
        if (headers[constants.HTTP2_HEADER_METHOD] !== 'POST' || !match) return answer(404, 'BadPath');
        const authorization = String(headers.authorization ?? '');
        const token = authorization.replace(/^bearer /, '');
        let providerTokenValid: boolean;
        try {
          const header = decodeProtectedHeader(token);
          const { payload } = await jwtVerify(token, expected.publicKey, {
            algorithms: ['ES256'],
            issuer: expected.teamId,
          });
          providerTokenValid = header.kid === expected.keyId && typeof payload.iat === 'number';
        } catch {
          providerTokenValid = false;
        }
        const body = Buffer.concat(chunks);
        received.push({
          deviceToken: match[1],
          topic: headers['apns-topic'] as string | undefined,
          pushType: headers['apns-push-type'] as string | undefined,
          payload: JSON.parse(body.toString('utf8')) as Record<string, unknown>,
          payloadBytes: body.length,
          providerTokenValid,
          providerToken: token,
        });
        if (!providerTokenValid) return answer(403, 'InvalidProviderToken');
        if (body.length > 4096) return answer(413, 'PayloadTooLarge');
        const next = scripts.get(match[1])?.shift();
        if (next) return answer(next.status, next.reason);
        answer(200);
      })();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    script: (deviceToken, ...answers) => scripts.set(deviceToken, [...(scripts.get(deviceToken) ?? []), ...answers]),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
      }),
  };
}
