import type { NextFunction, Request, Response } from 'express';
import type { Logger } from 'pino';
import { routeTemplate } from '../http/route-template.js';

/**
 * One line per answered request, at `info` (`error` for a 5xx), so the default log shows the
 * traffic: the route template (never the raw path, which carries identifiers), status, duration,
 * the organization the caller acted for (a session's or key's organization, or an SDK request's
 * tenant) and the request id that the answer's `X-Request-ID` and any error line share.
 */
export function requestLogger(logger: Logger) {
  return (request: Request, response: Response, next: NextFunction): void => {
    const started = performance.now();
    response.once('finish', () => {
      const status = response.statusCode;
      const level = status >= 500 ? 'error' : 'info';
      if (!logger.isLevelEnabled(level)) return;
      logger[level](
        {
          requestId: request.requestId,
          method: request.method,
          route: routeTemplate(request),
          status,
          durationMs: Math.round((performance.now() - started) * 10) / 10,
          organizationId: request.auth?.organizationId ?? request.tenant?.organizationId ?? null,
        },
        'request completed',
      );
    });
    next();
  };
}
