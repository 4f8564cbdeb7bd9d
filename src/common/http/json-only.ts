import type { NextFunction, Request, Response } from 'express';
import { AppException } from '../errors/app-exception.js';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;

/**
 * The JSON API takes JSON bodies only: a state-changing request under `/api/` that carries a body
 * of another type (a form post from a foreign page, say) is answered 415 before anything parses
 * it. Form bodies are for the device-login page alone (`/device/…`).
 */
export function jsonOnlyApi() {
  return (request: Request, _response: Response, next: NextFunction): void => {
    if (SAFE_METHODS.has(request.method) || !request.path.startsWith('/api/') || !hasBody(request)) return next();
    const type = request.headers['content-type'] ?? '';
    if (JSON_TYPE.test(type)) return next();
    next(
      new AppException(415, 'unsupported_media_type', 'The API takes JSON bodies only', {
        hint: 'Send Content-Type: application/json',
      }),
    );
  };
}

function hasBody(request: Request): boolean {
  const length = request.headers['content-length'];
  return request.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}
