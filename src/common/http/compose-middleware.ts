import type { NextFunction, Request, RequestHandler, Response } from 'express';

/**
 * Runs Express middleware in order as one handler: what every request passes through is one
 * router layer rather than one a step (Express's router matches each layer against the path
 * before calling it, which is most of what the per-request pipeline cost). The first error, passed
 * to `next` or thrown, goes to the router's error handlers, as it would from separate layers.
 */
export function composeMiddleware(handlers: readonly RequestHandler[]): RequestHandler {
  const steps = [...handlers];
  return (request: Request, response: Response, done: NextFunction): void => {
    let index = 0;
    const next = (error?: unknown): void => {
      if (error) {
        done(error);
        return;
      }
      const step = steps[index++];
      if (!step) {
        done();
        return;
      }
      try {
        void step(request, response, next);
      } catch (thrown) {
        done(thrown);
      }
    };
    next();
  };
}

/** `handler` only for requests whose path is `prefix` or below it (as `app.use(prefix, …)` mounts it). */
export function underPath(prefix: string, handler: RequestHandler): RequestHandler {
  return (request, response, next) => {
    const path = request.path;
    if (path === prefix || path.startsWith(`${prefix}/`)) handler(request, response, next);
    else next();
  };
}
