import type { NestExpressApplication } from '@nestjs/platform-express';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import session from 'express-session';
import type { AppConfig } from '../../config/app-config.js';
import { forbidden } from '../../common/errors/app-exception.js';
import { randomSecret } from '../../common/crypto.js';
import { composeMiddleware } from '../../common/http/compose-middleware.js';
import { SESSION_COOKIE } from '../../common/http/session-cookie.js';
import { PgSessionStore } from './pg-session-store.js';
import type { SessionSignIn } from './session-admission.js';
import { ServiceSecretsRepository } from '../service-secrets.repository.js';
import { SessionsRepository } from './sessions.repository.js';

export const SESSION_TTL_MS = 7 * 24 * 60 * 60 * 1000;

declare module 'express-session' {
  interface SessionData {
    userId: string;
    organizationId: string | null;
    /** How the session was made: which organizations it may act in (session-admission.ts). */
    signIn: SessionSignIn;
  }
}

/** Routes that create a session for a caller who has none yet. */
const SESSION_CREATING_PATHS = new Set([
  '/api/v1/auth/login',
  '/api/v1/auth/verify-email',
  '/device/login',
  '/api/v1/auth/sso/callback',
  '/sso/link',
]);

/**
 * Cookie sessions for the dashboard. The session middleware only runs for requests that carry
 * the cookie or create a session, so SDK and CI traffic never touches the session store. The
 * store and the secret come from the application's SessionsModule; a third argument (app.ts still
 * passes its data source) is ignored.
 */
export async function setUpSessions(
  app: NestExpressApplication,
  config: AppConfig,
  ..._ignored: unknown[]
): Promise<void> {
  const secure = config.baseUrl.startsWith('https:');
  const middleware = session({
    name: SESSION_COOKIE,
    secret: await sessionSecret(config, app.get(ServiceSecretsRepository, { strict: false })),
    store: new PgSessionStore(app.get(SessionsRepository, { strict: false })),
    resave: false,
    saveUninitialized: false,
    rolling: false,
    proxy: secure,
    cookie: { httpOnly: true, sameSite: config.sessionCookieSameSite, secure, maxAge: SESSION_TTL_MS, path: '/' },
  });
  const allowedOrigins = new Set([new URL(config.baseUrl).origin, ...config.dashboardOrigins]);
  if (config.dashboardOrigins.length) {
    app.enableCors({ origin: [...config.dashboardOrigins], credentials: true });
  }
  app.use(composeMiddleware([lazySession(middleware), originCheck(allowedOrigins)]));
}

function hasSessionCookie(request: Request): boolean {
  return request.headers.cookie?.includes(`${SESSION_COOKIE}=`) ?? false;
}

function lazySession(middleware: RequestHandler): RequestHandler {
  return (request, response, next) => {
    if (hasSessionCookie(request) || SESSION_CREATING_PATHS.has(request.path)) {
      middleware(request, response, next);
    } else {
      next();
    }
  };
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Cross-site request forgery defence for requests that change state with the cookie, and for
 * those that create a session without one (sign-in: a foreign page must not sign a visitor into
 * the attacker's account): a browser sends `Origin` on such requests, and it must be the service
 * itself or a configured dashboard.
 */
function originCheck(allowed: ReadonlySet<string>) {
  return (request: Request, _response: Response, next: NextFunction): void => {
    if (SAFE_METHODS.has(request.method)) return next();
    if (!hasSessionCookie(request) && !SESSION_CREATING_PATHS.has(request.path)) return next();
    const origin = request.headers.origin;
    if (origin === undefined || allowed.has(origin)) return next();
    next(forbidden('Cross-site request refused', { hint: 'The Origin header is not an allowed dashboard origin' }));
  };
}

/**
 * The secret session cookies (and, derived from it, device cookies) are signed with: SESSION_SECRET,
 * or without it one generated once and kept in the database, so every instance signs cookies alike
 * and sessions survive restarts.
 */
export async function sessionSecret(config: AppConfig, secrets: ServiceSecretsRepository): Promise<string> {
  return config.sessionSecret ?? secrets.secret('session_secret', () => randomSecret(48));
}
