import type { Request } from 'express';

/** Label of requests that matched no route, so unknown URLs cannot grow a series or a log field without bound. */
export const UNMATCHED_ROUTE = 'unmatched';

/**
 * The route template Express matched (`/api/v1/apps/:appId`), never the raw path, so metrics and
 * logs carry a bounded set of values and no identifiers. Known once the router has run: read it
 * when the response finishes.
 */
export function routeTemplate(request: Request): string {
  const path = (request.route as { path?: unknown } | undefined)?.path;
  return typeof path === 'string' ? path : UNMATCHED_ROUTE;
}
