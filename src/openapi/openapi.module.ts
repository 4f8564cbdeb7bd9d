import { Module } from '@nestjs/common';
import { OpenApiController } from './openapi.controller.js';
import { OpenApiDocumentService } from './openapi-document.service.js';

/** `GET /api/v1/openapi.json`; `setUpOpenApi` (src/openapi/setup.ts) adds the `/docs` page. */
@Module({
  controllers: [OpenApiController],
  providers: [OpenApiDocumentService],
  exports: [OpenApiDocumentService],
})
export class OpenApiModule {}
