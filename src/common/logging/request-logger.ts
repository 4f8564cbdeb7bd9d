import type { NextFunction, Request, Response } from 'express';
import type { Logger } from 'pino';

/**
 * One structured line per answered request, carrying its request id: errors at `error`, client
 * errors at `info`, the rest at `debug`. It builds nothing per request unless the line will be
 * written, which keeps the SDK hot paths cheap at the default level.
 */
export function requestLogger(logger: Logger) {
  return (request: Request, response: Response, next: NextFunction): void => {
    const started = performance.now();
    response.once('finish', () => {
      const status = response.statusCode;
      const level = status >= 500 ? 'error' : status >= 400 ? 'info' : 'debug';
      if (!logger.isLevelEnabled(level)) return;
      logger[level](
        {
          requestId: request.requestId,
          method: request.method,
          path: request.path,
          status,
          durationMs: Math.round((performance.now() - started) * 10) / 10,
        },
        'request completed',
      );
    });
    next();
  };
}
