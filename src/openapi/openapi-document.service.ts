import { Inject, Injectable, type INestApplication } from '@nestjs/common';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { buildOpenApiDocument } from './build-document.js';
import type { OpenApiDocument } from './openapi-types.js';

/** The application's OpenAPI document, built on first use and kept for the life of the process. */
@Injectable()
export class OpenApiDocumentService {
  private app: INestApplication | null = null;
  private document: OpenApiDocument | null = null;

  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  /** Called by `setUpOpenApi`: the document is generated from the application's routes. */
  attach(app: INestApplication): void {
    this.app = app;
  }

  get(): OpenApiDocument {
    if (!this.app) throw new Error('OpenAPI: setUpOpenApi(app) was not called');
    this.document ??= buildOpenApiDocument(this.app, { serverUrl: this.config.baseUrl });
    return this.document;
  }
}
