import type { Request } from 'express';
import type {} from 'express-session';

/**
 * The dashboard's session cookie and the request-level session calls every controller that signs
 * a caller in or out makes. The store and the middleware behind them are the auth feature's
 * (`auth/session/session-setup.ts`).
 */
export const SESSION_COOKIE = 'attestly.sid';

/** Promisified helpers over express-session's callback API. */
export function regenerateSession(request: Request): Promise<void> {
  return settle((done) => request.session.regenerate(done));
}

export function saveSession(request: Request): Promise<void> {
  return settle((done) => request.session.save(done));
}

export function destroySession(request: Request): Promise<void> {
  const current = (request as Partial<Pick<Request, 'session'>>).session;
  if (!current) return Promise.resolve();
  return settle((done) => current.destroy(done));
}

function settle(start: (done: (error?: unknown) => void) => void): Promise<void> {
  return new Promise((resolve, reject) =>
    start((error) => (error ? reject(error instanceof Error ? error : new Error('session store failed')) : resolve())),
  );
}
