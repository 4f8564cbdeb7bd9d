import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One API call the service made to the fake Stripe. */
export interface StripeCall {
  method: string;
  path: string;
  /** The form-encoded body, decoded. */
  form: Record<string, string>;
  authorization: string | undefined;
  idempotencyKey: string | undefined;
}

export type StripeAnswer = { status: number; body: unknown };

/** Answers one call; undefined falls back to the built-in happy answers. */
export type StripeBehaviour = (call: StripeCall) => StripeAnswer | undefined;

export interface FakeStripe {
  /** For STRIPE_API_URL. */
  readonly url: string;
  readonly calls: StripeCall[];
  behave(behaviour: StripeBehaviour | null): void;
  close(): Promise<void>;
}

/**
 * A local stand-in for Stripe's REST API on 127.0.0.1, answering the calls the service makes the
 * way Stripe does (form-encoded requests, JSON objects, Stripe's error envelope), so the official
 * SDK is exercised end to end without leaving the machine.
 */
export async function startFakeStripe(): Promise<FakeStripe> {
  const calls: StripeCall[] = [];
  let behaviour: StripeBehaviour | null = null;
  const server: Server = createServer((request, response) => {
    void bodyOf(request).then((body) => {
      const call: StripeCall = {
        method: request.method ?? 'GET',
        path: (request.url ?? '/').split('?')[0],
        form: Object.fromEntries(new URLSearchParams(body)),
        authorization: request.headers.authorization,
        idempotencyKey: header(request, 'idempotency-key'),
      };
      calls.push(call);
      const answer = behaviour?.(call) ?? happyAnswer(call);
      response.writeHead(answer.status, { 'Content-Type': 'application/json', 'Request-Id': `req_${calls.length}` });
      response.end(JSON.stringify(answer.body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    calls,
    behave(next) {
      behaviour = next;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Stripe's error envelope for a status. */
export function stripeError(status: number, message: string, type = 'invalid_request_error'): StripeAnswer {
  return { status, body: { error: { type, message } } };
}

function happyAnswer(call: StripeCall): StripeAnswer {
  if (call.method === 'POST' && call.path === '/v1/billing_portal/sessions') {
    return {
      status: 200,
      body: {
        id: 'bps_fake',
        object: 'billing_portal.session',
        customer: call.form.customer,
        return_url: call.form.return_url,
        url: `https://billing.stripe.com/p/session/test_${call.form.customer}`,
      },
    };
  }
  const subscription = /^\/v1\/subscriptions\/([^/]+)$/.exec(call.path);
  if (call.method === 'DELETE' && subscription) {
    return {
      status: 200,
      body: { id: decodeURIComponent(subscription[1]), object: 'subscription', status: 'canceled' },
    };
  }
  return stripeError(404, `Unrecognized request URL (${call.method}: ${call.path})`);
}

function header(request: IncomingMessage, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function bodyOf(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });
}
