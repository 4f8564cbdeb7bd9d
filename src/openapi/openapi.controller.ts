import { Controller, Get, Header } from '@nestjs/common';
import { Public } from '../common/access/access.decorator.js';
import { OpenApiDocumentService } from './openapi-document.service.js';
import type { OpenApiDocument } from './openapi-types.js';

@Controller('api/v1')
@Public()
export class OpenApiController {
  constructor(private readonly documents: OpenApiDocumentService) {}

  @Get('openapi.json')
  @Header('Cache-Control', 'public, max-age=300')
  document(): OpenApiDocument {
    return this.documents.get();
  }
}
