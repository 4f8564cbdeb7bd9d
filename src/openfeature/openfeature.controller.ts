import { Controller, Get, Param, Post, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { Access } from '../common/access/access.decorator.js';
import { ifNoneMatchHits, strongEtag } from '../flags/index.js';
import { RateLimit } from '../rate-limit/rate-limit.guard.js';
import type { OfrepCaller } from './ofrep-context.js';
import { OpenFeatureService } from './openfeature.service.js';

/**
 * The provider configuration of OFREP 0.1 (`GET /ofrep/v1/configuration`), which OFREP 0.2 removed:
 * kept for the providers that still ask. Polling is the change detection this service offers
 * OFREP clients (the SDK's own stream is GET /api/v1/flags/stream).
 */
const CONFIGURATION = JSON.stringify({
  name: 'Attestly',
  capabilities: {
    cacheInvalidation: { polling: { enabled: true, minPollingIntervalMs: 10_000 } },
    flagEvaluation: { supportedTypes: ['boolean', 'string', 'int', 'float', 'object'] },
  },
});
const CONFIGURATION_ETAG = strongEtag(CONFIGURATION);

/**
 * OpenFeature Remote Evaluation Protocol (OFREP): community OpenFeature providers evaluate this
 * service's flags unchanged. The callers of GET /api/v1/flags: the app's identity headers and a
 * device token (client side), or an API key of the organization with `flags:read` (server side),
 * under the same rate limit. Answers are written as OFREP defines them, errors of evaluation
 * included (decision 0071); authentication, rate limit and malformed JSON keep the service's envelope.
 */
@Controller('ofrep/v1')
@Access({ tenant: true, deviceToken: true })
export class OpenFeatureController {
  constructor(private readonly openFeature: OpenFeatureService) {}

  @Post('evaluate/flags/:key')
  @RateLimit('flags')
  async evaluateFlag(@Req() request: Request, @Res() response: Response, @Param('key') key: string): Promise<void> {
    const answer = await this.openFeature.evaluateOne(request.tenant!.appId, callerOf(request), key, request.body);
    response.setHeader('Cache-Control', 'private, no-store');
    writeJson(response, answer.status, JSON.stringify(withEnvelope(request, answer.status, answer.body)));
  }

  /**
   * Every flag at once, with a strong ETag of the exact body: a matching `If-None-Match` gets 304
   * with no body, so a polling web provider whose flags did not change pays no transfer.
   */
  @Post('evaluate/flags')
  @RateLimit('flags')
  async evaluateFlags(@Req() request: Request, @Res() response: Response): Promise<void> {
    const answer = await this.openFeature.evaluateAll(request.tenant!.appId, callerOf(request), request.body);
    response.setHeader('Cache-Control', 'private, no-cache');
    const body = JSON.stringify(answer.body);
    if (answer.status !== 200) {
      writeJson(response, answer.status, JSON.stringify(withEnvelope(request, answer.status, answer.body)));
      return;
    }
    const etag = strongEtag(body);
    response.setHeader('ETag', etag);
    if (ifNoneMatchHits(request.headers['if-none-match'], etag)) {
      response.status(304).end();
      return;
    }
    writeJson(response, 200, body);
  }

  @Get('configuration')
  @RateLimit('flags')
  configuration(@Req() request: Request, @Res() response: Response): void {
    response.setHeader('ETag', CONFIGURATION_ETAG);
    response.setHeader('Cache-Control', 'private, no-cache');
    if (ifNoneMatchHits(request.headers['if-none-match'], CONFIGURATION_ETAG)) {
      response.status(304).end();
      return;
    }
    writeJson(response, 200, CONFIGURATION);
  }
}

/** A device token says which device asks (its subject) and its risk score; an API key is a server. */
function callerOf(request: Request): OfrepCaller {
  const token = request.deviceToken;
  if (!token) return { kind: 'server' };
  return {
    kind: 'device',
    deviceId: token.sub,
    riskScore: typeof token.risk_score === 'number' ? token.risk_score : null,
  };
}

/**
 * An OFREP error body (`errorCode`, `errorDetails`, `key`) that also carries the service's error
 * envelope (`error`, `code`, `requestId`), so OFREP providers and the service's own clients both
 * read it (decision 0071). A successful answer is OFREP's alone.
 */
function withEnvelope(request: Request, status: number, body: object): object {
  if (status === 200 || !('errorCode' in body)) return body;
  const { errorCode, errorDetails } = body as { errorCode: string; errorDetails?: string };
  return {
    ...body,
    error: errorDetails || errorCode,
    code: errorCode.toLowerCase(),
    requestId: request.requestId ?? '',
  };
}

function writeJson(response: Response, status: number, body: string): void {
  response.status(status);
  response.setHeader('Content-Type', 'application/json; charset=utf-8');
  response.setHeader('Content-Length', Buffer.byteLength(body));
  response.end(body);
}
