/**
 * The parts of an OpenAPI 3.1 document this module reads and writes. Loose on purpose: schemas
 * are JSON Schema 2020-12, which @nestjs/swagger's (3.0-shaped) interfaces do not describe.
 */
export interface SchemaObject {
  [keyword: string]: unknown;
  $ref?: string;
  type?: string | string[];
  properties?: Record<string, SchemaObject>;
  required?: string[];
  nullable?: boolean;
}

export interface ParameterObject {
  name: string;
  in: 'query' | 'header' | 'path' | 'cookie';
  description?: string;
  required?: boolean;
  schema?: SchemaObject;
  [key: string]: unknown;
}

export interface MediaTypeObject {
  schema?: SchemaObject;
  [key: string]: unknown;
}

export interface ResponseObject {
  description?: string;
  headers?: Record<string, unknown>;
  content?: Record<string, MediaTypeObject>;
  $ref?: string;
}

export interface RequestBodyObject {
  description?: string;
  required?: boolean;
  content: Record<string, MediaTypeObject>;
}

export type SecurityRequirement = Record<string, string[]>;

export interface OperationObject {
  operationId?: string;
  summary?: string;
  description?: string;
  tags?: string[];
  parameters?: ParameterObject[];
  requestBody?: RequestBodyObject;
  responses: Record<string, ResponseObject>;
  security?: SecurityRequirement[];
  [key: string]: unknown;
}

export type PathItemObject = Partial<Record<string, OperationObject>>;

export interface OpenApiDocument {
  openapi: string;
  info: { title: string; version: string; description?: string };
  servers?: { url: string; description?: string }[];
  paths: Record<string, PathItemObject>;
  components: {
    schemas: Record<string, SchemaObject>;
    responses?: Record<string, ResponseObject>;
    securitySchemes?: Record<string, Record<string, unknown>>;
    headers?: Record<string, unknown>;
  };
  tags?: { name: string; description?: string }[];
  [key: string]: unknown;
}
