import { Injectable } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import type { FinishedRequestObserver } from '../common/http/request-context.js';
import { routeTemplate } from '../common/http/route-template.js';
import { Metrics, type AttestationCall, type AttestationResult } from './metrics.js';

const ATTESTATION_PREFIX = '/api/v1/attestation/';
const ATTESTATION_ROUTES: ReadonlyMap<string, AttestationCall> = new Map([
  ['/api/v1/attestation/validate', 'validate'],
  ['/api/v1/attestation/refresh', 'refresh'],
]);

/** The error envelope's `code` of an attestation answer, kept for the outcome series. */
const ERROR_CODE = Symbol('attestationErrorCode');
type WithErrorCode = Response & { [ERROR_CODE]?: string };

/**
 * Counts and times every answered request by route template (Express's matched route, such as
 * `/api/v1/apps/:appID`, never the raw URL) and status: `observe` is an observer of the request
 * context (src/app.ts). For the two attestation calls, `attestationCodes` (a step of the
 * per-request pipeline) keeps the error envelope's `code`, so attestation outcomes are counted
 * without the attestation service knowing about metrics.
 */
@Injectable()
export class HttpMetrics {
  constructor(private readonly metrics: Metrics) {}

  readonly observe: FinishedRequestObserver = (request, response, durationMs) => {
    const route = routeTemplate(request);
    const status = response.statusCode;
    this.metrics.request(request.method, route, status, durationMs / 1000);
    const call =
      request.method === 'POST' && request.originalUrl.startsWith(ATTESTATION_PREFIX)
        ? ATTESTATION_ROUTES.get(route)
        : undefined;
    if (call) {
      const code = (response as WithErrorCode)[ERROR_CODE];
      this.metrics.attestationOutcome(call, resultOf(status), status < 400 ? 'ok' : (code ?? 'unknown'));
    }
  };

  readonly attestationCodes = (request: Request, response: Response, next: NextFunction): void => {
    if (request.method === 'POST' && request.originalUrl.startsWith(ATTESTATION_PREFIX)) {
      const json = response.json;
      response.json = function (this: Response, body?: unknown) {
        (this as WithErrorCode)[ERROR_CODE] = errorCode(body);
        return json.call(this, body);
      };
    }
    next();
  };
}

function resultOf(status: number): AttestationResult {
  return status < 400 ? 'success' : status < 500 ? 'rejected' : 'error';
}

function errorCode(body: unknown): string | undefined {
  const code = typeof body === 'object' && body !== null ? (body as { code?: unknown }).code : undefined;
  return typeof code === 'string' ? code : undefined;
}
