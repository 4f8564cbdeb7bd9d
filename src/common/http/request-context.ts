import { randomUUID } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';

declare module 'express-serve-static-core' {
  interface Request {
    requestId: string;
  }
}

const ACCEPTABLE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * Echoes a well-formed `X-Request-ID` or mints a UUID, and stamps the deployed commit on every
 * response. Runs first, before body parsing, so even a malformed body's error carries both.
 */
export function requestContext(commit: string) {
  return (request: Request, response: Response, next: NextFunction): void => {
    const incoming = request.headers['x-request-id'];
    const requestId = typeof incoming === 'string' && ACCEPTABLE_REQUEST_ID.test(incoming) ? incoming : randomUUID();
    request.requestId = requestId;
    response.setHeader('X-Request-ID', requestId);
    response.setHeader('X-Service-Commit', commit);
    next();
  };
}
