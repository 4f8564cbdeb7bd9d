import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import { API_VERSION } from '../health/health.controller.js';
import { ERROR_RESPONSES, ERROR_SCHEMAS, SECURITY_SCHEMES, responseRef, securityOf } from './components.js';
import { DtoSchemas } from './dto-schemas.js';
import type {
  OpenApiDocument,
  OperationObject,
  ParameterObject,
  ResponseObject,
  SchemaObject,
} from './openapi-types.js';
import { ROUTE_EXAMPLES } from './examples.js';
import { GENERATED_RESPONSES } from './response-schemas.generated.js';
import { RESPONSE_SCHEMAS, ROUTE_DOCS, type RouteDoc } from './route-docs.js';
import { operationIdOf, routeTable, type RouteInfo } from './route-table.js';
import { CONTROLLER_TAGS } from './tags.js';

export const OPENAPI_VERSION = '3.1.0';

const DESCRIPTION = [
  'Multi-tenant App Attest verification, signed tokens, feature flags, webhooks and a support console.',
  '',
  'Every error answers one envelope (`Error`): `error`, a stable `code`, an optional `hint`, the `requestId`,',
  'and on 422 the invalid `fields`. Each operation lists the credentials it accepts under `security`;',
  "`x-access` repeats the route's access declaration as the code states it.",
].join('\n');

/**
 * The OpenAPI 3.1 document of the running application.
 *
 * @nestjs/swagger scans the controllers for the skeleton (paths, methods, parameters, body types,
 * `@HttpCode`, and any `@Api*` decorator a route carries); this then completes each operation
 * from the code's own metadata: request schemas from the DTOs' class-validator decorators,
 * security from the `@Access` rule, the error envelope, response schemas from the handlers'
 * return types (`response-schemas.generated.ts`), and what `route-docs.ts` adds by hand (examples,
 * non-JSON answers). Decorators on a route win over the generated defaults.
 */
export function buildOpenApiDocument(app: INestApplication, options: { serverUrl?: string } = {}): OpenApiDocument {
  const builder = new DocumentBuilder()
    .setOpenAPIVersion(OPENAPI_VERSION)
    .setTitle('Attestly API')
    .setDescription(DESCRIPTION)
    .setVersion(API_VERSION);
  if (options.serverUrl) builder.addServer(options.serverUrl);
  const document = SwaggerModule.createDocument(app, builder.build(), {
    operationIdFactory: operationIdOf,
    // Tags come from CONTROLLER_TAGS, with their descriptions.
    autoTagControllers: false,
  }) as unknown as OpenApiDocument;

  const dtos = new DtoSchemas();
  const generated = takeOperations(document);
  for (const route of routeTable(app)) {
    const operation = generated.get(route.generatedOperationId) ?? { operationId: route.operationId, responses: {} };
    (document.paths[route.openApiPath] ??= {})[route.method] = complete(operation, route, dtos);
  }

  const tags = new Set(
    Object.values(document.paths).flatMap((item) => Object.values(item).flatMap((op) => op?.tags ?? [])),
  );
  const described = new Map(Object.values(CONTROLLER_TAGS).map((tag) => [tag.name, tag.description]));
  document.tags = [...tags]
    .sort()
    .map((name) => ({ name, ...(described.has(name) ? { description: described.get(name) } : {}) }));
  const decorated = document.components?.schemas ?? {};
  document.components = {
    ...document.components,
    schemas: sortedKeys({
      ...decorated,
      ...Object.fromEntries(
        Object.entries(dtos.schemas).map(([name, schema]) => [name, withDecorations(schema, decorated[name])]),
      ),
      ...distinct(GENERATED_RESPONSES.schemas, dtos.schemas, { ...ERROR_SCHEMAS, ...RESPONSE_SCHEMAS }),
      ...ERROR_SCHEMAS,
      ...RESPONSE_SCHEMAS,
    }),
    responses: ERROR_RESPONSES,
    securitySchemes: SECURITY_SCHEMES,
  };
  freeFormObjects(document);
  withoutUnusedComponents(document);
  return document;
}

/**
 * Generated response schemas, which must not take a name the document already gives another
 * schema. A request DTO class echoed in an answer (a change request's proposed body) keeps the
 * schema its validation rules give it: both describe the same class.
 */
function distinct(
  generated: Readonly<Record<string, SchemaObject>>,
  dtos: Record<string, SchemaObject>,
  others: Record<string, SchemaObject>,
): Record<string, SchemaObject> {
  const result: Record<string, SchemaObject> = {};
  for (const [name, schema] of Object.entries(generated)) {
    if (others[name]) throw new Error(`OpenAPI: the response type ${name} has the name of another schema; rename one`);
    if (!dtos[name]) result[name] = schema;
  }
  return result;
}

const SCHEMA_STRUCTURE = ['properties', 'additionalProperties', 'patternProperties', '$ref', 'allOf', 'anyOf', 'oneOf'];

/**
 * An object schema that names no members (a DTO's `@IsObject()` field, say) is free-form: said
 * with `additionalProperties: true`, so generated clients type it as a record of unknown values.
 */
function freeFormObjects(node: unknown): void {
  if (Array.isArray(node)) {
    node.forEach(freeFormObjects);
    return;
  }
  if (!node || typeof node !== 'object') return;
  const schema = node as SchemaObject;
  const types = ([] as unknown[]).concat(schema.type ?? []);
  if (types.includes('object') && !SCHEMA_STRUCTURE.some((keyword) => keyword in schema)) {
    schema.additionalProperties = true;
  }
  Object.values(schema).forEach(freeFormObjects);
}

/** Drops the schemas and responses no operation reaches (query DTOs become parameters, for one). */
function withoutUnusedComponents(document: OpenApiDocument): void {
  const reached = new Set<string>();
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(visit);
    if (!node || typeof node !== 'object') return;
    for (const [key, value] of Object.entries(node)) {
      if (key === '$ref' && typeof value === 'string' && !reached.has(value)) {
        reached.add(value);
        const [, , kind, name] = value.split('/');
        if (kind === 'schemas') visit(document.components.schemas[name]);
        if (kind === 'responses') visit(document.components.responses?.[name]);
      } else visit(value);
    }
  };
  visit(document.paths);
  const keep = <T>(kind: string, record: Record<string, T>) =>
    Object.fromEntries(Object.entries(record).filter(([name]) => reached.has(`#/components/${kind}/${name}`)));
  document.components.schemas = keep('schemas', document.components.schemas);
  document.components.responses = keep('responses', document.components.responses ?? {});
}

/**
 * Removes @nestjs/swagger's operations from the document, by operation id: each goes back under
 * the path and method the router really serves, so the two can never disagree.
 */
function takeOperations(document: OpenApiDocument): Map<string, OperationObject> {
  const operations = new Map<string, OperationObject>();
  for (const pathItem of Object.values(document.paths)) {
    for (const [method, operation] of Object.entries(pathItem)) {
      if (!operation?.operationId) continue;
      operations.set(operation.operationId, operation);
      delete pathItem[method];
    }
  }
  for (const [path, pathItem] of Object.entries(document.paths)) {
    if (!Object.keys(pathItem).length) delete document.paths[path];
  }
  return operations;
}

function complete(generated: OperationObject, route: RouteInfo, dtos: DtoSchemas): OperationObject {
  const doc: RouteDoc = ROUTE_DOCS[`${route.method.toUpperCase()} ${route.openApiPath}`] ?? {};
  const operation: OperationObject = { ...generated, operationId: route.operationId };
  operation.summary ??= doc.summary ?? sentence(route.handlerName);
  if (!operation.tags?.length) operation.tags = [CONTROLLER_TAGS[route.controller.name]?.name ?? route.controller.name];
  if (doc.description) operation.description ??= doc.description;
  // A hand-written parameter replaces the generated one of the same name and place.
  const written = doc.parameters ?? [];
  operation.parameters = [
    ...parameters(generated.parameters ?? [], route, dtos).filter(
      (parameter) => !written.some((other) => other.name === parameter.name && other.in === parameter.in),
    ),
    ...written,
  ];
  if (!operation.parameters.length) delete operation.parameters;

  const body = doc.requestBody ?? requestBody(route, dtos);
  if (body) operation.requestBody = body;
  else delete operation.requestBody;

  if (route.access) {
    operation.security = securityOf(route.access);
    operation['x-access'] = route.access;
  } else {
    operation.description = [operation.description, 'Declares no access rule: the access guard refuses it (403).']
      .filter(Boolean)
      .join('\n\n');
  }
  operation.responses = responses(generated.responses ?? {}, route, doc);
  withExamples(operation, route);
  return operation;
}

/** The route's example request body and success answer (examples.ts), on their JSON media types. */
function withExamples(operation: OperationObject, route: RouteInfo): void {
  const example = ROUTE_EXAMPLES[`${route.method.toUpperCase()} ${route.openApiPath}`];
  if (!example) return;
  const success = operation.responses[String(route.successStatus)];
  const answer = success?.content?.['application/json'];
  if (!success || !answer) throw new Error(`OpenAPI: ${route.operationId} has an example but no JSON answer`);
  operation.responses[String(route.successStatus)] = {
    ...success,
    content: { ...success.content, 'application/json': { ...answer, example: example.response } },
  };
  const body = operation.requestBody?.content['application/json'];
  if (example.request === undefined) return;
  if (!operation.requestBody || !body)
    throw new Error(`OpenAPI: ${route.operationId} has a request example but no body`);
  operation.requestBody = {
    ...operation.requestBody,
    content: { ...operation.requestBody.content, 'application/json': { ...body, example: example.request } },
  };
}

function parameters(generated: readonly ParameterObject[], route: RouteInfo, dtos: DtoSchemas): ParameterObject[] {
  const queryDto = route.query && route.query !== Object ? dtos.resolve(route.query) : null;
  const kept = generated
    // A query DTO becomes one parameter per property below, from its validation metadata.
    .filter((parameter) => !(queryDto && parameter.in === 'query'))
    .map((parameter) => {
      if (parameter.in === 'path') {
        const uuid = route.pathParams.find((param) => param.name === parameter.name)?.uuid;
        return { ...parameter, required: true, schema: { type: 'string', ...(uuid ? { format: 'uuid' } : {}) } };
      }
      if (parameter.in === 'query' && route.queryNames.includes(parameter.name)) {
        // `@Query('name')` parameters are read as optional strings and checked by the handler.
        return { ...parameter, required: false, schema: { type: 'string' } };
      }
      if (parameter.in === 'header') return { ...parameter, required: false, schema: { type: 'string' } };
      return parameter;
    });
  for (const name of route.queryNames) {
    if (!kept.some((parameter) => parameter.in === 'query' && parameter.name === name)) {
      kept.push({ name, in: 'query', required: false, schema: { type: 'string' } });
    }
  }
  // Path parameters come first, in the order of the path: a handler serving several paths (and a
  // pipe over the whole params object) names some of them in no decorator.
  const inPath = route.pathParams.map(
    (param): ParameterObject =>
      kept.find((parameter) => parameter.in === 'path' && parameter.name === param.name) ?? {
        name: param.name,
        required: true,
        in: 'path',
        schema: { type: 'string', ...(param.uuid ? { format: 'uuid' } : {}) },
      },
  );
  kept.splice(0, kept.length, ...inPath, ...kept.filter((parameter) => parameter.in !== 'path'));
  if (queryDto) {
    const required = new Set(queryDto.required ?? []);
    for (const [name, schema] of Object.entries(queryDto.properties ?? {})) {
      kept.push({ name, in: 'query', required: required.has(name), schema });
    }
  }
  return kept;
}

function requestBody(route: RouteInfo, dtos: DtoSchemas): OperationObject['requestBody'] {
  if (!route.body) return undefined;
  const schema: SchemaObject = route.body === Object ? { type: 'object' } : dtos.ref(route.body);
  return { required: true, content: { 'application/json': { schema } } };
}

const SUCCESS_DESCRIPTIONS: Record<number, string> = {
  200: 'OK',
  201: 'Created',
  202: 'Accepted: the work continues in the background',
  204: 'No content',
};

function responses(
  generated: Record<string, ResponseObject>,
  route: RouteInfo,
  doc: RouteDoc,
): Record<string, ResponseObject> {
  const result: Record<string, ResponseObject> = {};
  const documentedSuccess = Object.keys(doc.responses ?? {}).some(isSuccess);
  for (const [status, response] of Object.entries(generated)) {
    // A bare `{ description: '' }` is @nestjs/swagger's placeholder for the default status.
    const placeholder = !response.description && !response.content;
    if (placeholder && documentedSuccess) continue;
    result[status] = placeholder ? successResponse(Number(status), route) : response;
  }
  const status = String(route.successStatus);
  if (!Object.keys(result).some(isSuccess) && !documentedSuccess) {
    result[status] = successResponse(route.successStatus, route);
  } else if (
    !result[status] &&
    !doc.responses?.[status] &&
    !route.rawResponse &&
    GENERATED_RESPONSES.operations[route.handlerId]
  ) {
    // Another success is declared (a 202 by `@ApiResponse`), and the handler's own answer stays.
    result[status] = successResponse(route.successStatus, route);
  }

  const errors: Record<string, ResponseObject> = {};
  // The validation pipe checks bodies and query DTOs; a malformed UUID path parameter answers 400.
  const validated = route.body !== null || (route.query !== null && route.query !== Object);
  if (
    route.body !== null ||
    route.access?.tenant ||
    route.invalidInputStatus === 400 ||
    route.pathParams.some((p) => p.uuid)
  ) {
    errors['400'] = responseRef('BadRequest');
  }
  const changesState = route.method !== 'get' && route.method !== 'head' && route.method !== 'options';
  if (route.access && !route.access.public) errors['401'] = responseRef('Unauthorized');
  // Public routes that change state refuse a cross-site request that carries the session cookie.
  if (!route.access || !route.access.public || (changesState && route.expressPath.startsWith('/api/'))) {
    errors['403'] = responseRef('Forbidden');
  }
  if (route.pathParams.length || route.access?.tenant) errors['404'] = responseRef('NotFound');
  if (validated && route.invalidInputStatus === 422) errors['422'] = responseRef('ValidationFailed');
  // The API takes JSON bodies only: a state-changing request with another body type answers 415.
  if (changesState && route.expressPath.startsWith('/api/')) errors['415'] = responseRef('UnsupportedMediaType');
  if (route.rateLimits.length) errors['429'] = responseRef('RateLimited');
  errors.default = responseRef('Error');

  return byStatus({ ...errors, ...result, ...(doc.responses ?? {}) });
}

/** Statuses in order (`2XX` after `299`), `default` last. */
function byStatus(responses: Record<string, ResponseObject>): Record<string, ResponseObject> {
  const rank = (status: string) => (status === 'default' ? 1000 : Number(status.replace(/X/g, '9')));
  return Object.fromEntries(Object.entries(responses).sort(([a], [b]) => rank(a) - rank(b)));
}

function successResponse(status: number, route: RouteInfo): ResponseObject {
  const description = SUCCESS_DESCRIPTIONS[status] ?? 'Success';
  if (status === 204) return { description };
  // `@Res()` without passthrough: the handler writes status, headers and body itself.
  if (route.rawResponse) return { description: `${description}; the handler writes the response itself` };
  // The handler's return type; `null` when it returns nothing. A route missing here (the generated
  // file is stale) keeps an empty schema, which the document's test refuses.
  const schema = GENERATED_RESPONSES.operations[route.handlerId];
  if (schema === null) return { description };
  return { description, content: { 'application/json': { schema: schema ? structuredClone(schema) : {} } } };
}

function isSuccess(status: string): boolean {
  return /^[23]/.test(status);
}

/** `listDeliveries` → `List deliveries`. */
function sentence(handlerName: string): string {
  const words = handlerName.replace(/([a-z0-9])([A-Z])/g, '$1 $2').toLowerCase();
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/**
 * A DTO schema from its validation rules, with what `@ApiProperty` decorators on the class add
 * (descriptions, examples) layered over each property.
 */
function withDecorations(generated: SchemaObject, decorated: SchemaObject | undefined): SchemaObject {
  const properties = decorated?.properties ?? {};
  if (!Object.keys(properties).length) return generated;
  return {
    ...generated,
    properties: Object.fromEntries(
      Object.entries({ ...generated.properties, ...properties }).map(([name, schema]) => [
        name,
        { ...generated.properties?.[name], ...schema },
      ]),
    ),
    required: [...new Set([...(generated.required ?? []), ...(decorated?.required ?? [])])],
  };
}

function sortedKeys<T>(record: Record<string, T>): Record<string, T> {
  return Object.fromEntries(Object.entries(record).sort(([a], [b]) => a.localeCompare(b)));
}
