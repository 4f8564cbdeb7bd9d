import { Injectable, type NestMiddleware } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import { routeTemplate } from '../common/http/route-template.js';
import { Metrics, type AttestationCall, type AttestationResult } from './metrics.js';

const ATTESTATION_PREFIX = '/api/v1/attestation/';
const ATTESTATION_ROUTES: ReadonlyMap<string, AttestationCall> = new Map([
  ['/api/v1/attestation/validate', 'validate'],
  ['/api/v1/attestation/refresh', 'refresh'],
]);

/**
 * Times every routed request and counts it by route template (Express's matched route, such as
 * `/api/v1/apps/:appID`, never the raw URL) and status once the response is finished. For the
 * two attestation calls it also reads the error envelope's `code`, so attestation outcomes are
 * counted without the attestation service knowing about metrics.
 */
@Injectable()
export class HttpMetricsMiddleware implements NestMiddleware {
  constructor(private readonly metrics: Metrics) {}

  use(request: Request, response: Response, next: NextFunction): void {
    const done = this.metrics.startRequest();
    const attestation = request.method === 'POST' && request.originalUrl.startsWith(ATTESTATION_PREFIX);
    let code: string | undefined;
    if (attestation) {
      const json = response.json;
      response.json = function (this: Response, body?: unknown) {
        code = errorCode(body);
        return json.call(this, body);
      };
    }
    response.once('finish', () => {
      const route = routeTemplate(request);
      const status = response.statusCode;
      done(request.method, route, status);
      const call = attestation ? ATTESTATION_ROUTES.get(route) : undefined;
      if (call) this.metrics.attestationOutcome(call, resultOf(status), status < 400 ? 'ok' : (code ?? 'unknown'));
    });
    next();
  }
}

function resultOf(status: number): AttestationResult {
  return status < 400 ? 'success' : status < 500 ? 'rejected' : 'error';
}

function errorCode(body: unknown): string | undefined {
  const code = typeof body === 'object' && body !== null ? (body as { code?: unknown }).code : undefined;
  return typeof code === 'string' ? code : undefined;
}
