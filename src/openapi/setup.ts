import type { NestExpressApplication } from '@nestjs/platform-express';
import { SwaggerModule, type OpenAPIObject } from '@nestjs/swagger';
import { OpenApiDocumentService } from './openapi-document.service.js';

export const OPENAPI_JSON_PATH = '/api/v1/openapi.json';
export const DOCS_PATH = 'docs';

/**
 * Gives the document service the application it describes, and serves Swagger UI at `/docs`
 * (raw Express routes and swagger-ui-dist's assets: public, outside the access guard). The page
 * shows the same cached document that `GET /api/v1/openapi.json` answers.
 */
export function setUpOpenApi(app: NestExpressApplication): void {
  const documents = app.get(OpenApiDocumentService);
  documents.attach(app);
  SwaggerModule.setup(DOCS_PATH, app, () => documents.get() as unknown as OpenAPIObject, {
    raw: false,
    swaggerUrl: OPENAPI_JSON_PATH,
    customSiteTitle: 'Attestly API',
  });
}
