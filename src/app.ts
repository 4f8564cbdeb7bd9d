import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { json, urlencoded } from 'express';
import type { NestExpressApplication } from '@nestjs/platform-express';
import type { Logger } from 'pino';
import { AppModule } from './app.module.js';
import { AllExceptionsFilter } from './common/errors/all-exceptions.filter.js';
import { verifyJsonBody } from './common/http/json-depth.js';
import { composeMiddleware, underPath } from './common/http/compose-middleware.js';
import { jsonOnlyApi } from './common/http/json-only.js';
import { securityHeaders } from './common/http/security-headers.js';
import { requestContext } from './common/http/request-context.js';
import { PinoNestLogger } from './common/logging/logger.js';
import { requestLogger } from './common/logging/request-logger.js';
import { createValidationPipe } from './common/validation/validation.js';
import { DataSource } from 'typeorm';
import { setUpSessions } from './auth/session/session-setup.js';
import type { AppConfig } from './config/app-config.js';
import { setUpOpenApi } from './openapi/setup.js';
import { HttpMetrics } from './metrics/http-metrics.js';

export const BODY_LIMIT = '1mb';

/**
 * How long an idle keep-alive connection stays open: longer than the 60 s idle timeout of the
 * load balancers and ingress proxies in front of the service, so the proxy closes first. With
 * Node's 5 s default a proxy reuses a connection the service is closing at that instant and
 * answers 502 (ECONNRESET). The headers timeout must exceed it (Node's rule).
 */
export const KEEP_ALIVE_TIMEOUT_MS = 65_000;

/** Builds the HTTP application exactly as production runs it; the tests use the same function. */
export async function createApp(config: AppConfig & { databaseUrl: string }, logger: Logger) {
  const app = await NestFactory.create<NestExpressApplication>(AppModule.forRoot(config), {
    bodyParser: false,
    logger: new PinoNestLogger(logger),
    abortOnError: false,
  });
  const errors = new AllExceptionsFilter(logger);
  const server = app.getHttpServer();
  server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
  server.headersTimeout = KEEP_ALIVE_TIMEOUT_MS + 1_000;
  app.disable('x-powered-by');
  // No ETag hashing of every JSON answer: API clients do not revalidate, and it costs on hot paths.
  app.set('etag', false);
  app.set('trust proxy', config.trustProxy);
  app.set('query parser', 'simple');
  const metrics = app.get(HttpMetrics);
  // What every request passes through, as one router layer (see composeMiddleware); the request
  // log and the metrics hear of each answer through the request context's one `finish` listener.
  app.use(
    composeMiddleware([
      requestContext(config.serviceCommit, [requestLogger(logger), metrics.observe]),
      metrics.attestationCodes,
      securityHeaders(config),
      jsonOnlyApi(),
      // Express's own parsers: Nest's useBodyParser withholds `verify`, which keeps the bytes as
      // request.rawBody (Stripe signatures) and refuses deep nesting before JSON.parse.
      json({ limit: BODY_LIMIT, verify: verifyJsonBody }),
      // Form bodies for the device-login and SSO pages only; the API answers other types 415 (jsonOnlyApi).
      underPath('/device', urlencoded({ limit: BODY_LIMIT, extended: false })),
      underPath('/sso', urlencoded({ limit: BODY_LIMIT, extended: false })),
    ]),
  );
  await setUpSessions(app, config, app.get(DataSource));
  app.use(errors.middleware);
  app.useGlobalFilters(errors);
  app.useGlobalPipes(createValidationPipe());
  setUpOpenApi(app);
  app.enableShutdownHooks([]);
  return app;
}
