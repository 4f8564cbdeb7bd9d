import { randomUUID } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';

declare module 'express-serve-static-core' {
  interface Request {
    requestId: string;
  }
}

const ACCEPTABLE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * Told of every answered request once its response has finished, with the time since the request
 * reached the service. The request log and the HTTP metrics are observers: one `finish` listener
 * serves them all.
 */
export type FinishedRequestObserver = (request: Request, response: Response, durationMs: number) => void;

/**
 * Echoes a well-formed `X-Request-ID` or mints a UUID, and stamps the deployed commit on every
 * response. Runs first, before body parsing, so even a malformed body's error carries both; and
 * tells `observers` of each request once it is answered.
 */
export function requestContext(commit: string, observers: readonly FinishedRequestObserver[] = []) {
  const notify = [...observers];
  return (request: Request, response: Response, next: NextFunction): void => {
    const incoming = request.headers['x-request-id'];
    const requestId = typeof incoming === 'string' && ACCEPTABLE_REQUEST_ID.test(incoming) ? incoming : randomUUID();
    request.requestId = requestId;
    response.setHeader('X-Request-ID', requestId);
    response.setHeader('X-Service-Commit', commit);
    if (notify.length > 0) {
      const started = performance.now();
      response.once('finish', () => {
        const durationMs = performance.now() - started;
        for (const observe of notify) observe(request, response, durationMs);
      });
    }
    next();
  };
}
