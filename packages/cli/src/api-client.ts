import { ApiError, ClientError, EXIT } from './client-errors.js';

export type Authentication =
  | { readonly kind: 'apiKey'; readonly key: string }
  | { readonly kind: 'session'; readonly cookie: string }
  | { readonly kind: 'none' };

export interface ApiResponse<T> {
  readonly status: number;
  readonly body: T;
  readonly headers: Headers;
}

const REQUEST_TIMEOUT_MS = 30_000;

/** JSON over HTTP to the service, turning its error envelope into an `ApiError`. */
export class ApiClient {
  constructor(
    readonly baseUrl: string,
    readonly auth: Authentication,
  ) {}

  with(auth: Authentication): ApiClient {
    return new ApiClient(this.baseUrl, auth);
  }

  /** The parsed body of a 2xx answer; any other status throws `ApiError`. */
  async call<T>(method: string, path: string, body?: unknown): Promise<T> {
    return (await this.send<T>(method, path, body)).body;
  }

  async send<T>(method: string, path: string, body?: unknown): Promise<ApiResponse<T>> {
    const headers: Record<string, string> = { Accept: 'application/json', 'User-Agent': 'attestly-cli' };
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    if (this.auth.kind === 'apiKey') headers.Authorization = `Bearer ${this.auth.key}`;
    if (this.auth.kind === 'session') headers.Cookie = this.auth.cookie;
    let response: Response;
    try {
      response = await fetch(`${this.baseUrl}${path}`, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        redirect: 'manual',
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      });
    } catch (error) {
      throw new ClientError(`Cannot reach ${this.baseUrl}: ${describeNetworkError(error)}`, EXIT.failed, {
        code: 'unreachable',
      });
    }
    const text = await response.text();
    const parsed = parseJson(text);
    if (!response.ok) throw toApiError(response, parsed);
    return { status: response.status, body: parsed as T, headers: response.headers };
  }
}

function parseJson(text: string): unknown {
  if (text === '') return null;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function toApiError(response: Response, body: unknown): ApiError {
  const envelope = typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : {};
  const text = (key: string) => {
    const value = envelope[key];
    return typeof value === 'string' ? value : undefined;
  };
  const fields = Array.isArray(envelope.fields) ? (envelope.fields as { field: string; message: string }[]) : undefined;
  return new ApiError(
    response.status,
    text('code') ?? `http_${response.status}`,
    // A 402 quota answer carries its sentence in `message`; everything else in `error`.
    text('message') ?? text('error') ?? `HTTP ${response.status} ${response.statusText}`.trim(),
    text('hint'),
    text('requestId') ?? response.headers.get('x-request-id') ?? undefined,
    fields,
    retryAfterOf(response),
  );
}

function retryAfterOf(response: Response): number | undefined {
  const raw = response.headers.get('retry-after');
  return raw !== null && /^\d{1,6}$/.test(raw) ? Number(raw) : undefined;
}

function describeNetworkError(error: unknown): string {
  // Duck-typed: fetch's errors may come from another realm (undici inside a VM context).
  const { name, message, cause } = (typeof error === 'object' && error !== null ? error : {}) as {
    name?: string;
    message?: string;
    cause?: { code?: string; message?: string };
  };
  if (name === 'TimeoutError') return `no answer within ${REQUEST_TIMEOUT_MS / 1000} s`;
  return cause?.code ?? cause?.message ?? message ?? String(error);
}
