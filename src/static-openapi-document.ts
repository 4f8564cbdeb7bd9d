import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { AppModule } from './app.module.js';
import { loadConfig } from './config/app-config.js';
import { buildOpenApiDocument } from './openapi/build-document.js';
import type { OpenApiDocument } from './openapi/openapi-types.js';

/** Where the committed document lives (`npm run openapi` writes it; clients are generated from it). */
export const COMMITTED_OPENAPI_PATH = 'openapi.json';

/**
 * The OpenAPI document from the application's module metadata alone: Nest's preview mode registers
 * every module, controller and route without calling a provider factory, so nothing connects to
 * PostgreSQL, Redis or SMTP. The configuration is the defaults (no environment), so the one server
 * it names is `npm start`'s, http://localhost:3000; the running service's copy
 * (`GET /api/v1/openapi.json`) names its own BASE_URL instead.
 */
export async function buildStaticOpenApiDocument(): Promise<OpenApiDocument> {
  const config = loadConfig({});
  const app = await NestFactory.create<NestExpressApplication>(
    AppModule.forRoot({ ...config, databaseUrl: 'postgres://127.0.0.1:1/never-connected' }),
    { preview: true, logger: false, abortOnError: false },
  );
  try {
    return buildOpenApiDocument(app, { serverUrl: config.baseUrl });
  } finally {
    await app.close();
  }
}

/** The committed file's text: the document with sorted-as-built keys, two-space indented. */
export function openApiFileText(document: OpenApiDocument): string {
  return `${JSON.stringify(document, null, 2)}\n`;
}
