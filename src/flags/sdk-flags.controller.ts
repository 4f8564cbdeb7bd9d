import { Body, Controller, Get, HttpCode, Post, Query, Req, Res, type BeforeApplicationShutdown } from '@nestjs/common';
import type { Request, Response } from 'express';
import { Access } from '../common/access/access.decorator.js';
import { requestDeviceId } from '../common/access/request-device-id.js';
import { ValidationFailedException, notFound } from '../common/errors/app-exception.js';
import { tierDefinition } from '../common/tiers.js';
import { UuidParam } from '../common/validation/uuid-param.js';
import type { Tenant } from '../apps/tenant-resolver.js';
import { debugTokenIdOf } from '../devices/debug-subject.js';
import { OnTokenRevocation, type Revocation, type RevocationListener } from '../devices/deny-set.js';
import { Metrics } from '../metrics/metrics.js';
import { RateLimit } from '../rate-limit/rate-limit.guard.js';
import { evaluateFlag, evaluateFlagSetJson } from './evaluation/evaluate-flag.js';
import { evaluatePlannedJson, plannedInputs } from './evaluation/flag-set-plan.js';
import { ENVIRONMENTS, isEnvironment, type Environment, type EvaluationContext } from './evaluation/flag-types.js';
import { ifNoneMatchHits, strongEtag } from './conditional-fetch.js';
import { FlagStore, overridesOf } from './flag-store.js';
import { EvaluateFlagDto } from './flags.dto.js';
import { assertFeature } from '../organizations/plan.service.js';

const HEARTBEAT_MS = 15_000;

/**
 * The SDK's flag surface: identity headers plus the device's attestation token (or an API key
 * of the organization). Served from the in-memory flag store: no database read per request.
 */
@Controller('api/v1/flags')
@Access({ tenant: true, deviceToken: true })
@OnTokenRevocation()
export class SdkFlagsController implements BeforeApplicationShutdown, RevocationListener {
  /**
   * Open event streams, whose app and device they serve and what stops each: ended at shutdown (or
   * the server would wait on them forever) and when their token is revoked.
   */
  private readonly streams = new Map<Response, OpenStream>();

  constructor(
    private readonly store: FlagStore,
    metrics: Metrics,
  ) {
    metrics.gauge(
      'attestly_flag_streams_open',
      'Flag event streams (SSE) open on this instance',
      () => this.streams.size,
    );
  }

  /**
   * Answers with a strong ETag; a matching `If-None-Match` gets 304 with no body, so a polling SDK
   * whose flags did not change pays no transfer and no parsing. For a device without overrides the
   * tag digests the app's flag version and the device's inputs that matter (equal inputs, equal
   * bytes), so the 304 evaluates and serialises nothing; with overrides, it digests the body.
   */
  @Get()
  @RateLimit('flags')
  async flags(
    @Req() request: Request,
    @Res() response: Response,
    @Query('environment') environment?: string,
  ): Promise<void> {
    // Checked by hand rather than through a query DTO: this is the hottest route.
    const checked = environmentOf(environment);
    const set = await this.store.get(request.tenant!.appId);
    const context = deviceContext(request);
    const deviceKeyId = context.deviceId ?? null;
    const overrides = overridesOf(set, deviceKeyId);
    let body: string | null = null;
    let etag: string;
    if (overrides.size === 0) {
      // The set's version and the device's inputs decide the answer: tagged without evaluating it.
      etag = strongEtag(`${set.version}\n${plannedInputs(set.plan, checked, context)}`);
    } else {
      body = `{"flags":${evaluateFlagSetJson(set.flags, checked, context, overrides, { deviceKeyId })}}`;
      etag = strongEtag(body);
    }
    response.setHeader('ETag', etag);
    // The answer depends on the device's token and headers: never stored by a shared cache.
    response.setHeader('Cache-Control', 'private, no-cache');
    if (ifNoneMatchHits(request.headers['if-none-match'], etag)) {
      response.status(304).end();
      return;
    }
    body ??= `{"flags":${evaluatePlannedJson(set.plan, checked, context)}}`;
    response.status(200);
    response.setHeader('Content-Type', 'application/json; charset=utf-8');
    response.setHeader('Content-Length', Buffer.byteLength(body));
    response.end(body);
  }

  /** Server-sent events: a snapshot on connect, then a new one after every change. */
  @Get('stream')
  async stream(
    @Req() request: Request,
    @Res() response: Response,
    @Query('environment') requested?: string,
  ): Promise<void> {
    const tenant = request.tenant!;
    assertFeature(
      tierDefinition(tenant.serviceTier),
      'sseRealTime',
      'Real-time flag streaming is available from the Business plan',
    );
    const environment = environmentOf(requested);
    // Decided before the stream opens, so a refusal is an error answer, not a broken stream.
    const context = deviceContext(request);
    response.writeHead(200, {
      'Content-Type': 'text/event-stream',
      'Cache-Control': 'no-cache, no-transform',
      Connection: 'keep-alive',
      'X-Accel-Buffering': 'no',
    });
    let last = '';
    const send = async () => {
      const data = `{"flags":${await this.evaluate(tenant, context, environment)}}`;
      if (data === last || response.writableEnded) return;
      last = data;
      response.write(`event: snapshot\ndata: ${data}\n\n`);
    };
    let pending = Promise.resolve();
    const unsubscribe = this.store.subscribe(tenant.appId, () => {
      pending = pending.then(send).catch(() => undefined);
    });
    const heartbeat = setInterval(() => response.write(': heartbeat\n\n'), HEARTBEAT_MS);
    const stop = () => {
      clearInterval(heartbeat);
      unsubscribe();
      this.streams.delete(response);
    };
    this.streams.set(response, { appId: tenant.appId, keyId: request.deviceToken?.sub ?? null, stop });
    request.on('close', stop);
    await send();
  }

  /** Ends every stream cleanly before the server stops; the SDK reconnects to another instance. */
  beforeApplicationShutdown(): void {
    for (const [response, { stop }] of this.streams) {
      stop();
      response.end();
    }
  }

  /**
   * A blocked device, a revoked debug token, or a deactivated or deleted app (or organization),
   * loses its open streams:
   * a `revoked` event, then the end. Reconnecting meets the access guard's refusal.
   */
  revoked(revocation: Revocation): void {
    for (const [response, stream] of this.streams) {
      if (!revokes(revocation, stream)) continue;
      stream.stop();
      if (response.writableEnded) continue;
      const reason =
        revocation.kind === 'device'
          ? 'device_blocked'
          : revocation.kind === 'debugToken'
            ? 'debug_token_revoked'
            : `app_${revocation.state}`;
      response.end(`event: revoked\ndata: ${JSON.stringify({ reason })}\n\n`);
    }
  }

  @Post(':flagId/evaluate')
  @RateLimit('flags')
  @HttpCode(200)
  async evaluateOne(@Req() request: Request, @UuidParam('flagId') flagId: string, @Body() body: EvaluateFlagDto) {
    const tenant = request.tenant!;
    const { index } = await this.store.get(tenant.appId);
    const flag = index.byId.get(flagId);
    if (!flag) throw notFound('Flag');
    const { environment, ...context } = body;
    return evaluateFlag(flag, environment ?? 'production', context, { set: index });
  }

  /** The device's flag values as JSON text. */
  private async evaluate(tenant: Tenant, context: EvaluationContext, environment: string): Promise<string> {
    const set = await this.store.get(tenant.appId);
    const deviceKeyId = context.deviceId ?? null;
    return evaluateFlagSetJson(set.flags, environment, context, overridesOf(set, deviceKeyId), { deviceKeyId });
  }
}

interface OpenStream {
  appId: string;
  /** The device whose token opened it; null for a stream opened with an API key. */
  keyId: string | null;
  stop: () => void;
}

function revokes(revocation: Revocation, stream: OpenStream): boolean {
  switch (revocation.kind) {
    case 'device':
      return revocation.blocked && stream.keyId === revocation.keyId && revocation.appIds.includes(stream.appId);
    case 'app':
      return revocation.state !== 'active' && stream.appId === revocation.appId;
    case 'debugToken':
      return (
        stream.appId === revocation.appId &&
        stream.keyId !== null &&
        debugTokenIdOf(stream.keyId) === revocation.tokenId
      );
  }
}

function environmentOf(value: string | undefined): Environment {
  if (value === undefined) return 'production';
  if (isEnvironment(value)) return value;
  throw new ValidationFailedException([
    { field: 'environment', message: `must be one of: ${ENVIRONMENTS.join(', ')}` },
  ]);
}

/**
 * The device context of GET /flags and the stream: the attestation token's claims, and what the
 * SDK reports in headers (`X-App-Version`, `X-OS-Version`, `X-Device-Model`, `X-Locale`,
 * `X-Country`, `X-User-ID`). The device, whose overrides apply and whose rollout bucket counts, is
 * the token's subject; `X-Device-ID` may only repeat it (403 `device_id_mismatch` otherwise) and
 * names the device only for an API key (`requestDeviceId`, decision 0074).
 */
function deviceContext(request: Request): EvaluationContext {
  const header = (name: string) => {
    const value = request.headers[name];
    return typeof value === 'string' && value.length <= 200 ? value : null;
  };
  const token = request.deviceToken;
  const deviceId = requestDeviceId(request);
  return {
    deviceId: deviceId !== null && deviceId.length <= 200 ? deviceId : null,
    appVersion: header('x-app-version'),
    osVersion: header('x-os-version'),
    deviceModel: header('x-device-model'),
    locale: header('x-locale') ?? header('accept-language')?.split(',')[0]?.trim() ?? null,
    country: header('x-country'),
    userId: header('x-user-id'),
    riskScore: typeof token?.risk_score === 'number' ? token.risk_score : null,
    attestationStatus: token ? 'verified' : 'server',
  };
}
