import { createHash } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import { JSONPath } from 'jsonpath-plus';
import { UnsafeUrlError, assertPublicUrl } from '../../common/ssrf-guard.js';
import { ClaimEvaluationError } from './claim-evaluation-error.js';
import type {
  ClaimDefinition,
  DeviceContext,
  ExternalAuthentication,
  ExternalConfig,
  FieldError,
  JsonValue,
  ResponseMapping,
} from './claim-types.js';
import { ExpiringCache } from '../../common/expiring-cache.js';
import type { CredentialName } from './external-config.js';
import { compileExpression, evaluateExpression } from './expression-language.js';
import {
  DEFAULT_TIMEOUT_SECONDS,
  checkExternalConfig,
  jsonEscape,
  readCredential,
  renderTemplate,
} from './external-config.js';
import { formatFieldErrors, isRecord } from './input-checks.js';

export interface ExternalClaimFetcherOptions {
  /** Mirrors WEBHOOK_ALLOW_PRIVATE_NETWORKS: admits http:// and private addresses. */
  allowPrivateNetworks: boolean;
  fetch?: typeof fetch;
  /** Epoch milliseconds; drives cache and token expiry and the `now` placeholder. */
  now?: () => number;
}

export const MAX_RESPONSE_BYTES = 1024 * 1024;
const MAX_CACHE_ENTRIES = 10_000;
const RETRY_DELAY_MS = 100;
/** Tokens are renewed this long before the expiry the server announced. */
const TOKEN_EXPIRY_MARGIN_SECONDS = 30;
const DEFAULT_TOKEN_LIFETIME_SECONDS = 60;

type AttemptOutcome = { ok: true; body: JsonValue } | { ok: false; message: string };

function fingerprint(parts: unknown): string {
  return createHash('sha256').update(JSON.stringify(parts)).digest('base64url');
}

/** Reads at most MAX_RESPONSE_BYTES, so a hostile endpoint cannot exhaust memory. */
async function readJsonBody(response: Response): Promise<JsonValue> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = response.body?.getReader() as ReadableStreamDefaultReader<Uint8Array> | undefined;
  for (let chunk = await reader?.read(); chunk && !chunk.done; chunk = await reader?.read()) {
    size += chunk.value.byteLength;
    if (size > MAX_RESPONSE_BYTES) {
      await reader?.cancel();
      throw new ClaimEvaluationError(`response is larger than ${MAX_RESPONSE_BYTES} bytes`);
    }
    chunks.push(chunk.value);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8')) as JsonValue;
  } catch {
    throw new ClaimEvaluationError('response is not JSON');
  }
}

/**
 * Fetches values for `external` claims. One instance is meant to live for the process: it
 * holds the per-claim value cache and the OAuth2 token cache.
 *
 * Retries cover connection failures and 5xx answers. A timeout is not retried: an endpoint
 * that used its whole time budget once is likely to do it again, and every retry would add
 * the full timeout to the attestation that waits for the token.
 */
export class ExternalClaimFetcher {
  private readonly fetchImpl: typeof fetch;
  private readonly now: () => number;
  private readonly values: ExpiringCache<JsonValue>;
  private readonly tokens: ExpiringCache<string>;

  constructor(private readonly options: ExternalClaimFetcherOptions) {
    this.fetchImpl = options.fetch ?? fetch;
    this.now = options.now ?? Date.now;
    this.values = new ExpiringCache(MAX_CACHE_ENTRIES, this.now);
    this.tokens = new ExpiringCache(MAX_CACHE_ENTRIES, this.now);
  }

  /** The mapped value for this device; null when the response had none and there is no default. */
  async resolve(claim: Pick<ClaimDefinition, 'id' | 'externalConfig'>, context: DeviceContext): Promise<JsonValue> {
    const config = this.checkedConfig(claim.externalConfig);
    // The config is part of the key so an edited claim never serves values fetched for its old version.
    const cacheKey = fingerprint([claim.id, context.keyId, config]);
    const cached = this.values.get(cacheKey);
    if (cached !== undefined) return cached;
    const body = await this.request(config, context);
    const value = this.mapResponse(config.responseMapping, body, context);
    if (config.cacheSeconds) this.values.set(cacheKey, value, config.cacheSeconds * 1000);
    return value;
  }

  private checkedConfig(config: ExternalConfig | null): ExternalConfig {
    const problems: FieldError[] = [];
    checkExternalConfig(config, this.options, 'externalConfig', problems);
    if (problems.length > 0) throw new ClaimEvaluationError(formatFieldErrors(problems));
    return config as ExternalConfig;
  }

  private async request(config: ExternalConfig, context: DeviceContext): Promise<JsonValue> {
    const timeoutMs = (config.timeoutSeconds ?? DEFAULT_TIMEOUT_SECONDS) * 1000;
    const url = this.buildUrl(config, context);
    const body = config.bodyTemplate ? renderTemplate(config.bodyTemplate, context, this.now(), jsonEscape) : undefined;
    const headers = new Headers(config.headers ?? {});
    if (body !== undefined && !headers.has('content-type')) headers.set('content-type', 'application/json');
    if (!headers.has('accept')) headers.set('accept', 'application/json');
    if (config.authentication) {
      const [name, value] = await this.authorization(config.authentication, timeoutMs);
      headers.set(name, value);
    }
    const init: RequestInit = { method: config.method, headers, body, redirect: 'manual' };
    const attempts = 1 + (config.retryCount ?? 0);
    for (let attempt = 1; ; attempt++) {
      const outcome = await this.attempt(url, init, timeoutMs);
      if (outcome.ok) return outcome.body;
      if (attempt >= attempts) {
        throw new ClaimEvaluationError(`${outcome.message} (${attempt} attempt${attempt > 1 ? 's' : ''})`);
      }
      await delay(RETRY_DELAY_MS * attempt);
    }
  }

  private buildUrl(config: ExternalConfig, context: DeviceContext): string {
    const url = new URL(config.endpoint);
    for (const [name, template] of Object.entries(config.queryParameters ?? {})) {
      url.searchParams.set(
        name,
        renderTemplate(template, context, this.now(), (text) => text),
      );
    }
    return url.toString();
  }

  /** Resolves with a retryable failure, or throws for one that retrying cannot fix. */
  private async attempt(url: string, init: RequestInit, timeoutMs: number): Promise<AttemptOutcome> {
    await this.guard(url);
    const signal = AbortSignal.timeout(timeoutMs);
    try {
      const response = await this.fetchImpl(url, { ...init, signal });
      if (response.status >= 500) {
        await response.body?.cancel();
        return { ok: false, message: `endpoint answered ${response.status}` };
      }
      if (!response.ok) {
        await response.body?.cancel();
        const redirect = response.status >= 300 && response.status < 400 ? '; redirects are not followed' : '';
        throw new ClaimEvaluationError(`endpoint answered ${response.status}${redirect}`);
      }
      return { ok: true, body: await readJsonBody(response) };
    } catch (error) {
      if (error instanceof ClaimEvaluationError) throw error;
      if (signal.aborted) throw new ClaimEvaluationError(`endpoint did not answer within ${timeoutMs / 1000} s`);
      return { ok: false, message: `request failed: ${networkErrorMessage(error)}` };
    }
  }

  private async guard(url: string): Promise<void> {
    try {
      await assertPublicUrl(url, { allowPrivateNetworks: this.options.allowPrivateNetworks });
    } catch (error) {
      if (error instanceof UnsafeUrlError) throw new ClaimEvaluationError(`endpoint refused: ${error.message}`);
      throw error;
    }
  }

  private async authorization(authentication: ExternalAuthentication, timeoutMs: number): Promise<[string, string]> {
    const credential = (name: CredentialName): string => readCredential(authentication.credentials, name) ?? '';
    switch (authentication.type) {
      case 'basic':
        return [
          'authorization',
          `Basic ${Buffer.from(`${credential('username')}:${credential('password')}`).toString('base64')}`,
        ];
      case 'bearer':
        return ['authorization', `Bearer ${credential('token')}`];
      case 'api_key':
        return [readCredential(authentication.credentials, 'headerName') ?? 'X-API-Key', credential('apiKey')];
      case 'oauth2':
        return ['authorization', `Bearer ${await this.oauthToken(authentication.credentials, timeoutMs)}`];
    }
  }

  /** Client-credentials grant; the token is reused until shortly before it expires. */
  private async oauthToken(credentials: Record<string, string>, timeoutMs: number): Promise<string> {
    const tokenUrl = readCredential(credentials, 'tokenUrl') ?? '';
    const form = new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: readCredential(credentials, 'clientId') ?? '',
      client_secret: readCredential(credentials, 'clientSecret') ?? '',
    });
    const scope = readCredential(credentials, 'scope');
    if (scope !== undefined) form.set('scope', scope);
    const cacheKey = fingerprint([tokenUrl, form.toString()]);
    const cached = this.tokens.get(cacheKey);
    if (cached !== undefined) return cached;

    await this.guard(tokenUrl);
    const signal = AbortSignal.timeout(timeoutMs);
    let body: JsonValue;
    try {
      const response = await this.fetchImpl(tokenUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
        body: form.toString(),
        redirect: 'manual',
        signal,
      });
      if (!response.ok) {
        await response.body?.cancel();
        throw new ClaimEvaluationError(`token endpoint answered ${response.status}`);
      }
      body = await readJsonBody(response);
    } catch (error) {
      if (error instanceof ClaimEvaluationError) throw error;
      throw new ClaimEvaluationError(
        signal.aborted
          ? 'token endpoint did not answer in time'
          : `token request failed: ${networkErrorMessage(error)}`,
      );
    }
    if (!isRecord(body) || typeof body.access_token !== 'string' || body.access_token === '') {
      throw new ClaimEvaluationError('token endpoint returned no access_token');
    }
    this.tokens.set(cacheKey, body.access_token, tokenLifetimeMs(body.expires_in));
    return body.access_token;
  }

  private mapResponse(mapping: ResponseMapping, body: JsonValue, context: DeviceContext): JsonValue {
    let found: JsonValue[];
    try {
      // jsonpath-plus returns undefined rather than [] for a falsy document.
      found = JSONPath<JsonValue[] | undefined>({ path: mapping.jsonPath, json: body, eval: false, wrap: true }) ?? [];
    } catch (error) {
      throw new ClaimEvaluationError(`jsonPath failed: ${(error as Error).message}`);
    }
    if (found.length === 0 || (found.length === 1 && found[0] === null)) return mapping.defaultValue ?? null;
    const value = found.length === 1 ? found[0] : found;
    if (!mapping.transformExpression) return value;
    const transform = compileExpression(mapping.transformExpression, { allowValue: true });
    return evaluateExpression(transform, { context, now: this.now(), value });
  }
}

function tokenLifetimeMs(expiresIn: JsonValue | undefined): number {
  const announced = Number(expiresIn);
  const seconds = Number.isFinite(announced) && announced > 0 ? announced : DEFAULT_TOKEN_LIFETIME_SECONDS;
  return Math.max(seconds - TOKEN_EXPIRY_MARGIN_SECONDS, seconds / 2) * 1000;
}

/** undici hides the useful part (ECONNREFUSED, ENOTFOUND...) in `cause`. */
function networkErrorMessage(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (error as Error).message;
}
