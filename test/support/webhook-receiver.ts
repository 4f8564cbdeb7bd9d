// Real HTTP webhook receivers on 127.0.0.1 for the delivery tests, with scripted behaviour:
//
//   const receiver = await startWebhookReceiver(failTimes(2));
//   ... create an endpoint with receiver.url, cause events ...
//   await eventually(() => receiver.received.length === 3);
//
// `verifyingSignatures` checks every request with only the documented rule (sha256= and the hex
// HMAC-SHA256 of the raw body keyed with the endpoint secret), using node:crypto directly and no
// code of the service.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedWebhook {
  /** The raw body bytes. */
  raw: Buffer;
  body: string;
  headers: IncomingHttpHeaders;
  event: string;
  deliveryId: string;
  signature: string;
  /** When the request arrived (Date.now()). */
  receivedAt: number;
  /** The status this receiver answered with; null while hanging. */
  answered: number | null;
}

export type Reply = { status: number; body?: string } | 'hang';
/** Decides the answer to the `index`-th request (0-based). */
export type Behaviour = (request: ReceivedWebhook, index: number) => Reply;

export interface WebhookReceiver {
  url: string;
  readonly received: ReceivedWebhook[];
  /** Changes how the following requests are answered. */
  behave(behaviour: Behaviour): void;
  close(): Promise<void>;
}

export const respond =
  (status = 200, body = 'ok'): Behaviour =>
  () => ({ status, body });

/** Answers 500 to the first `failures` requests, then `status`. */
export const failTimes =
  (failures: number, status = 200): Behaviour =>
  (_request, index) =>
    index < failures ? { status: 500, body: `failure ${index + 1}` } : { status, body: 'ok' };

/** Never answers. */
export const hang: Behaviour = () => 'hang';

/** 200 when the signature is right for the secret of the moment, else 401. */
export function verifyingSignatures(secret: () => string): Behaviour {
  return (request) => {
    const expected = Buffer.from(`sha256=${createHmac('sha256', secret()).update(request.raw).digest('hex')}`);
    const given = Buffer.from(request.signature);
    const valid = expected.length === given.length && timingSafeEqual(expected, given);
    return valid ? { status: 200, body: 'verified' } : { status: 401, body: 'bad signature' };
  };
}

export async function startWebhookReceiver(initial: Behaviour = respond()): Promise<WebhookReceiver> {
  let behaviour = initial;
  const received: ReceivedWebhook[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const raw = Buffer.concat(chunks);
      const header = (name: string) => String(request.headers[name] ?? '');
      const entry: ReceivedWebhook = {
        raw,
        body: raw.toString('utf8'),
        headers: request.headers,
        event: header('x-service-event'),
        deliveryId: header('x-service-delivery'),
        signature: header('x-service-signature'),
        receivedAt: Date.now(),
        answered: null,
      };
      const index = received.push(entry) - 1;
      const reply = behaviour(entry, index);
      if (reply === 'hang') return;
      entry.answered = reply.status;
      response.writeHead(reply.status, { 'Content-Type': 'text/plain' }).end(reply.body ?? '');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`,
    received,
    behave: (next) => {
      behaviour = next;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Polls until `check` holds, running `step` (a sweep, say) before each look; fails after `timeoutMs`. */
export async function eventually(
  check: () => boolean | Promise<boolean>,
  options: { timeoutMs?: number; intervalMs?: number; step?: () => Promise<unknown> } = {},
): Promise<void> {
  const deadline = Date.now() + (options.timeoutMs ?? 15_000);
  for (;;) {
    await options.step?.();
    if (await check()) return;
    if (Date.now() > deadline) throw new Error('condition not reached in time');
    await sleep(options.intervalMs ?? 50);
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** The receivers one test file starts, closed together by `closeAll()` in its `afterAll`. */
export class WebhookReceivers {
  private readonly started: WebhookReceiver[] = [];

  async start(behaviour?: Behaviour): Promise<WebhookReceiver> {
    const receiver = await startWebhookReceiver(behaviour);
    this.started.push(receiver);
    return receiver;
  }

  async closeAll(): Promise<void> {
    await Promise.all(this.started.map((receiver) => receiver.close()));
  }
}
