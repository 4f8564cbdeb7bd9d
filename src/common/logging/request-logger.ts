import type { Logger } from 'pino';
import type { FinishedRequestObserver } from '../http/request-context.js';
import { routeTemplate } from '../http/route-template.js';

/**
 * One line per answered request, at `info` (`error` for a 5xx), so the default log shows the
 * traffic: the route template (never the raw path, which carries identifiers), status, duration,
 * the organization the caller acted for (a session's or key's organization, or an SDK request's
 * tenant) and the request id that the answer's `X-Request-ID` and any error line share. An
 * observer of `requestContext`.
 */
export function requestLogger(logger: Logger): FinishedRequestObserver {
  return (request, response, durationMs) => {
    const status = response.statusCode;
    const level = status >= 500 ? 'error' : 'info';
    if (!logger.isLevelEnabled(level)) return;
    logger[level](
      {
        requestId: request.requestId,
        method: request.method,
        route: routeTemplate(request),
        status,
        durationMs: Math.round(durationMs * 10) / 10,
        organizationId: request.auth?.organizationId ?? request.tenant?.organizationId ?? null,
      },
      'request completed',
    );
  };
}
