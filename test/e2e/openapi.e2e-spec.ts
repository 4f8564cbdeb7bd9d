import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { RequestMethod } from '@nestjs/common';
import { METHOD_METADATA, PATH_METADATA, ROUTE_ARGS_METADATA } from '@nestjs/common/constants.js';
import { RouteParamtypes } from '@nestjs/common/enums/route-paramtypes.enum.js';
import { ModulesContainer, Reflector } from '@nestjs/core';
import { Validator } from '@seriousme/openapi-schema-validator';
import { ACCESS_KEY, type AccessRule } from '../../src/common/access/access.decorator.js';
import { OpenApiDocumentService } from '../../src/openapi/openapi-document.service.js';
import type { OpenApiDocument } from '../../src/openapi/openapi-types.js';
import { ROUTE_DOCS } from '../../src/openapi/route-docs.js';
import { createApiKey, createOrg } from '../factories/identity.js';
import { createAppRow } from '../factories/organization.js';
import { startTestApp, type TestApp } from '../harness/test-app.js';
import { ResponseValidator } from '../support/openapi-responses.js';

// JSON documents are walked freely in the assertions.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = Record<string, any>;

const root = new URL('../..', import.meta.url).pathname;
const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

/** `/api/v1/apps/:appID` → `/api/v1/apps/{appID}`. */
const toOpenApiPath = (path: string) => path.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
const key = (method: string, path: string) => `${method.toUpperCase()} ${path}`;

/** Every route the running app's Express router serves, apart from the Swagger UI page and its assets. */
function expressRoutes(t: TestApp): string[] {
  const router = (t.app.getHttpAdapter().getInstance() as { router: { stack: Json[] } }).router;
  const routes = new Set<string>();
  for (const layer of router.stack) {
    const route = layer.route as { path: string; methods: Record<string, boolean> } | undefined;
    if (!route || route.path === '/docs' || route.path.startsWith('/docs/')) continue;
    for (const [method, on] of Object.entries(route.methods))
      if (on) routes.add(key(method, toOpenApiPath(route.path)));
  }
  return [...routes].sort();
}

interface DeclaredRoute {
  readonly access: AccessRule | undefined;
  readonly hasBody: boolean;
}

/** What each controller method declares, read from Nest's metadata independently of src/openapi. */
function declaredRoutes(t: TestApp): Map<string, DeclaredRoute> {
  const reflector = new Reflector();
  const routes = new Map<string, DeclaredRoute>();
  for (const module of t.app.get(ModulesContainer).values()) {
    for (const wrapper of module.controllers.values()) {
      const controller = wrapper.metatype as (new () => object) | null;
      if (!controller) continue;
      // A controller or a handler may declare several paths (`@Get(['a', 'b'])`): each is a route.
      const paths = (target: object): string[] => [Reflect.getMetadata(PATH_METADATA, target) ?? ''].flat().map(String);
      for (const name of Object.getOwnPropertyNames(controller.prototype)) {
        const handler = (controller.prototype as Json)[name];
        if (typeof handler !== 'function' || Reflect.getMetadata(METHOD_METADATA, handler) === undefined) continue;
        const method = RequestMethod[Reflect.getMetadata(METHOD_METADATA, handler) as RequestMethod].toLowerCase();
        const args = Object.keys(Reflect.getMetadata(ROUTE_ARGS_METADATA, controller, name) ?? {});
        for (const base of paths(controller)) {
          for (const own of paths(handler)) {
            const path = `/${[base, own].join('/')}`.replace(/\/+/g, '/').replace(/(.)\/$/, '$1');
            routes.set(key(method, toOpenApiPath(path)), {
              access: reflector.getAllAndOverride<AccessRule | undefined>(ACCESS_KEY, [handler, controller]),
              hasBody: args.some((arg) => arg.startsWith(`${RouteParamtypes.BODY}:`)),
            });
          }
        }
      }
    }
  }
  return routes;
}

function operations(document: Json): Map<string, Json> {
  const found = new Map<string, Json>();
  for (const [path, item] of Object.entries(document.paths as Json)) {
    for (const method of HTTP_METHODS) if (item[method]) found.set(key(method, path), item[method]);
  }
  return found;
}

function resolve(document: Json, node: Json): Json {
  let current = node;
  for (let hops = 0; typeof current?.$ref === 'string'; hops++) {
    if (hops > 10 || !current.$ref.startsWith('#/')) throw new Error(`cannot resolve ${current.$ref}`);
    current = current.$ref
      .slice(2)
      .split('/')
      .reduce((at: Json | undefined, part: string) => at?.[part] as Json | undefined, document) as Json;
    if (current === undefined) throw new Error(`dangling reference ${node.$ref}`);
  }
  return current;
}

function allRefs(node: unknown, found: string[] = []): string[] {
  if (Array.isArray(node)) node.forEach((item) => allRefs(item, found));
  else if (node && typeof node === 'object') {
    for (const [name, value] of Object.entries(node)) {
      if (name === '$ref' && typeof value === 'string') found.push(value);
      else allRefs(value, found);
    }
  }
  return found;
}

/**
 * The problems of `value` against a documented schema: enough JSON Schema (references, types,
 * required, properties, additionalProperties, items, enum/const, allOf) to hold the hand-written
 * response shapes to what the service really answers.
 */
function schemaProblems(document: Json, schemaOrRef: Json, value: unknown, at = '$'): string[] {
  const schema = resolve(document, schemaOrRef);
  const problems: string[] = [];
  for (const part of schema.allOf ?? []) problems.push(...schemaProblems(document, part, value, at));
  const types = schema.type === undefined ? [] : ([] as string[]).concat(schema.type);
  const typeOf = (v: unknown) =>
    v === null ? 'null' : Array.isArray(v) ? 'array' : Number.isInteger(v) ? 'integer' : typeof v;
  if (
    types.length &&
    !types.some((type) => type === typeOf(value) || (type === 'number' && typeOf(value) === 'integer'))
  ) {
    return [...problems, `${at}: ${typeOf(value)} is not ${types.join('|')}`];
  }
  if ('const' in schema && value !== schema.const) problems.push(`${at}: ${String(value)} is not ${schema.const}`);
  if (schema.enum && !schema.enum.includes(value))
    problems.push(`${at}: ${String(value)} is not one of ${schema.enum}`);
  if (typeOf(value) === 'object') {
    const object = value as Json;
    for (const name of schema.required ?? []) if (!(name in object)) problems.push(`${at}.${name}: missing`);
    for (const [name, member] of Object.entries(object)) {
      const property = schema.properties?.[name] ?? schema.additionalProperties;
      if (
        property === false ||
        (property === undefined && schema.properties && schema.additionalProperties === undefined)
      ) {
        problems.push(`${at}.${name}: not documented`);
      } else if (property && property !== true) {
        problems.push(...schemaProblems(document, property, member, `${at}.${name}`));
      }
    }
  }
  if (Array.isArray(value) && schema.items) {
    value.forEach((item, index) => problems.push(...schemaProblems(document, schema.items, item, `${at}[${index}]`)));
  }
  return problems;
}

describe('OpenAPI document (GET /api/v1/openapi.json) and /docs', () => {
  let t: TestApp;
  let document: Json;

  beforeAll(async () => {
    t = await startTestApp();
    const response = await t.http().get('/api/v1/openapi.json').expect(200);
    expect(response.headers['content-type']).toMatch(/^application\/json/);
    document = response.body as Json;
  });
  afterAll(async () => {
    await t.close();
  });

  it('is a valid OpenAPI 3.1 document', async () => {
    const validator = new Validator();
    const result = await validator.validate(structuredClone(document));
    expect(result.errors).toBeUndefined();
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
    expect(document.openapi).toBe('3.1.0');
  });

  it('has no dangling references and unique operation ids', () => {
    for (const ref of new Set(allRefs(document))) expect(() => resolve(document, { $ref: ref })).not.toThrow();
    const ids = [...operations(document).values()].map((operation) => operation.operationId as string);
    expect(ids.every(Boolean)).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('documents exactly the routes the app serves', () => {
    const served = expressRoutes(t);
    expect(served.length).toBeGreaterThan(100);
    expect(served).toContain('GET /api/v1/openapi.json');
    expect([...operations(document).keys()].sort()).toEqual(served);
  });

  it('has a served route for every hand-written route description', () => {
    const documented = [...operations(document).keys()];
    for (const route of Object.keys(ROUTE_DOCS)) expect(documented).toContain(route);
  });

  it('gives every route a described success response and the error envelope', () => {
    const missing: string[] = [];
    for (const [route, operation] of operations(document)) {
      const responses = Object.entries(operation.responses ?? {}).map(
        ([status, response]) => [status, resolve(document, response as Json)] as const,
      );
      const described = responses.filter(
        ([, response]) => typeof response.description === 'string' && response.description,
      );
      if (described.length !== responses.length) missing.push(`${route}: a response without a description`);
      if (!described.some(([status]) => /^[23]/.test(status))) missing.push(`${route}: no success response`);
      const errors = responses.filter(([status]) => /^[45]|^default$/.test(status));
      if (!errors.length) missing.push(`${route}: no error response`);
    }
    expect(missing).toEqual([]);

    const envelope = document.components.schemas.Error;
    expect(envelope.required).toEqual(['error', 'code', 'requestId']);
    expect(Object.keys(envelope.properties)).toEqual(['error', 'code', 'hint', 'requestId', 'fields']);
  });

  it("gives every JSON success response a schema, from the handler's return type", () => {
    const empty: string[] = [];
    let json = 0;
    for (const [route, operation] of operations(document)) {
      for (const [status, response] of Object.entries(operation.responses as Json)) {
        if (!/^2/.test(status)) continue;
        const schema = resolve(document, response as Json).content?.['application/json']?.schema as Json | undefined;
        if (!schema) continue;
        json++;
        if (!Object.keys(schema).length) empty.push(`${route} ${status}`);
      }
    }
    // A route missing from response-schemas.generated.ts (run `npm run openapi:responses`) or whose
    // handler returns `unknown`/`any` lands here.
    expect(empty).toEqual([]);
    expect(json).toBeGreaterThan(110);
    // The mappers' declared types are the components.
    const schemas = document.components.schemas;
    expect(operations(document).get('GET /api/v1/apps')!.responses['200'].content['application/json'].schema).toEqual({
      type: 'array',
      items: { $ref: '#/components/schemas/AppResponse' },
    });
    expect(schemas.AppResponse.required).toEqual(expect.arrayContaining(['id', 'appName', 'bundleId', 'createdAt']));
    expect(schemas.AppResponse.properties.createdAt).toEqual({ type: 'string', format: 'date-time' });
    expect(schemas.FlagOverrideResponse.properties.expiresAt).toMatchObject({ type: ['string', 'null'] });
  });

  it('gives free-form objects `additionalProperties: true`', () => {
    const config = resolve(document, document.components.schemas.ClaimConfigurationResponse.properties.externalConfig);
    const external = resolve(
      document,
      (config.anyOf as Json[]).find((s) => Boolean(s.$ref))!,
    );
    expect(external.type).toBe('object');
    const loose: string[] = [];
    const visit = (node: unknown, at: string): void => {
      if (!node || typeof node !== 'object') return;
      const schema = node as Json;
      const structured = ['properties', 'additionalProperties', 'patternProperties', '$ref', 'allOf', 'anyOf', 'oneOf'];
      if ([].concat(schema.type ?? []).includes('object' as never) && !structured.some((k) => k in schema))
        loose.push(at);
      for (const [key, value] of Object.entries(schema)) visit(value, `${at}/${key}`);
    };
    visit(document.paths, '#/paths');
    visit(document.components, '#/components');
    expect(loose).toEqual([]);
    expect(document.components.schemas.AuditEntryResponse.properties.metadata).toEqual({
      type: 'object',
      additionalProperties: true,
    });
  });

  it('gives the SDK routes and the main dashboard routes examples that match their schemas', () => {
    const validator = new ResponseValidator(document as OpenApiDocument);
    const problems: string[] = [];
    const withExample: string[] = [];
    for (const [route, operation] of operations(document)) {
      const media = [
        ...Object.entries(operation.responses as Json).map(
          ([status, response]) => [status, resolve(document, response as Json).content?.['application/json']] as const,
        ),
        ['request', operation.requestBody?.content?.['application/json']] as const,
      ];
      for (const [where, content] of media) {
        if (!content || !('example' in content)) continue;
        withExample.push(`${route} ${where}`);
        problems.push(...validator.problems(`${route} ${where}`, content.schema as Json, content.example));
      }
    }
    expect(problems).toEqual([]);
    expect(withExample).toEqual(
      expect.arrayContaining([
        'GET /api/v1/attestation/challenge 200',
        'POST /api/v1/attestation/validate 200',
        'POST /api/v1/attestation/validate request',
        'GET /api/v1/flags 200',
        'POST /api/v1/feedback/features 201',
        'POST /api/v1/auth/login 200',
        'GET /api/v1/apps 200',
        'POST /api/v1/apps request',
        'POST /api/v1/dashboard/apps/{appId}/flags 201',
      ]),
    );
    // The check bites: a wrong example is reported.
    const apps = operations(document).get('GET /api/v1/apps')!.responses['200'].content['application/json'];
    expect(validator.problems('wrong', apps.schema as Json, [{ ...apps.example[0], bundleId: 7 }])).not.toEqual([]);
  });

  it('tags every operation with a described tag', () => {
    const described = new Map((document.tags as Json[]).map((tag) => [tag.name, tag.description]));
    for (const [route, operation] of operations(document)) {
      expect([route, operation.tags.length]).toEqual([route, 1]);
      expect([route, typeof described.get(operation.tags[0])]).toEqual([route, 'string']);
    }
  });

  it('documents 402 quota_exceeded on validate and 429 with its headers where a route is limited', () => {
    const ops = operations(document);
    const validate = ops.get('POST /api/v1/attestation/validate')!;
    const quota = resolve(document, validate.responses['402']);
    const quotaSchema = resolve(document, quota.content['application/json'].schema);
    expect(quotaSchema.required).toEqual(expect.arrayContaining(['code', 'limit', 'current', 'upgradeUrl']));
    const limited = [...ops].filter(([, op]) => op.responses['429']).map(([route]) => route);
    expect(limited).toEqual(
      expect.arrayContaining([
        'POST /api/v1/attestation/validate',
        'GET /api/v1/attestation/challenge',
        'GET /api/v1/flags',
        'POST /api/v1/auth/register',
        'POST /api/v1/auth/login',
        'POST /api/v1/feedback/features',
        'GET /api/v1/analytics/events',
      ]),
    );
    // Only where something limits: dashboard CRUD does not.
    expect(limited).not.toContain('GET /api/v1/apps');
    const tooMany = resolve(document, ops.get('GET /api/v1/flags')!.responses['429']);
    expect(Object.keys(tooMany.headers)).toEqual(
      expect.arrayContaining(['Retry-After', 'X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset']),
    );
    expect(resolve(document, tooMany.content['application/json'].schema).required).toEqual([
      'error',
      'code',
      'requestId',
    ]);
  });

  it('gives every route with a body a request schema', () => {
    const declared = declaredRoutes(t);
    const withBody = [...declared].filter(([, route]) => route.hasBody).map(([route]) => route);
    expect(withBody.length).toBeGreaterThan(40);
    const ops = operations(document);
    for (const route of withBody) {
      const content = ops.get(route)?.requestBody?.content as Json | undefined;
      const schema = content?.['application/json']?.schema as Json | undefined;
      expect([route, schema && resolve(document, schema).type]).toEqual([route, 'object']);
    }
  });

  it('documents request DTOs from their validation rules', () => {
    const schemas = document.components.schemas;
    const validate = resolve(
      document,
      operations(document).get('POST /api/v1/attestation/validate')!.requestBody.content['application/json'].schema,
    );
    expect(validate.required).toEqual(expect.arrayContaining(['keyId', 'attestationObject', 'challenge']));
    expect(validate.additionalProperties).toBe(false);
    expect(validate.properties.challenge).toMatchObject({ type: 'string', maxLength: 200 });
    // Nested DTOs are components of their own.
    expect(schemas.CreateAppDto.properties.jwtConfiguration.$ref).toBe('#/components/schemas/JwtConfigurationDto');
    expect(schemas.FlagRuleDto.properties.conditions.items.$ref).toBe('#/components/schemas/FlagConditionDto');
    // A query DTO becomes one parameter per property.
    expect(operations(document).get('GET /api/v1/flags')!.parameters).toContainEqual(
      expect.objectContaining({ name: 'environment', in: 'query', required: false }),
    );
  });

  it('asks for no credentials on public routes and for the declared ones elsewhere', () => {
    const declared = declaredRoutes(t);
    const ops = operations(document);
    const schemes = Object.keys(document.components.securitySchemes);
    expect(schemes.sort()).toEqual(['apiKey', 'attestationToken', 'bundleId', 'packageName', 'session', 'teamId']);
    expect(document.components.securitySchemes.session).toMatchObject({
      type: 'apiKey',
      in: 'cookie',
      name: 'attestly.sid',
    });
    let publicRoutes = 0;
    for (const [route, { access }] of declared) {
      const operation = ops.get(route)!;
      expect([route, access === undefined]).toEqual([route, false]);
      if (access?.public) {
        publicRoutes++;
        expect([route, operation.security ?? []]).toEqual([route, []]);
        continue;
      }
      const security = operation.security as Record<string, string[]>[];
      expect([route, security.length > 0]).toEqual([route, true]);
      for (const requirement of security) {
        for (const scheme of Object.keys(requirement)) expect(schemes).toContain(scheme);
        // An SDK route names its app by X-Bundle-ID and X-Team-ID (iOS) or by X-Package-Name (Android).
        if (access?.tenant) {
          const named = requirement.packageName
            ? [requirement.packageName, requirement.bundleId, requirement.teamId]
            : [[], requirement.bundleId, requirement.teamId];
          expect([route, ...named]).toEqual(
            requirement.packageName ? [route, [], undefined, undefined] : [route, [], [], []],
          );
        }
      }
      if (access?.session) expect(security).toContainEqual(expect.objectContaining({ session: [access.session] }));
      if (access?.apiKey) expect(security).toContainEqual(expect.objectContaining({ apiKey: [...access.apiKey] }));
      if (access?.deviceToken) expect(security).toContainEqual(expect.objectContaining({ attestationToken: [] }));
      expect(operation.responses['401']).toEqual({ $ref: '#/components/responses/Unauthorized' });
    }
    expect(publicRoutes).toBeGreaterThan(5);
    expect(ops.get('GET /api/v1/openapi.json')!.security).toEqual([]);
  });

  it('describes the SDK hot paths as the service answers them', async () => {
    const ops = operations(document);
    const documented = (route: string, status = '200') =>
      ops.get(route)!.responses[status].content['application/json'].schema as Json;

    for (const [route, url] of [
      ['GET /health', '/health'],
      ['GET /api/v1/health', '/api/v1/health'],
      ['GET /api/v1/health/status', '/api/v1/health/status'],
      ['GET /.well-known/jwks.json', '/.well-known/jwks.json'],
    ]) {
      const response = await t.http().get(url).expect(200);
      expect([route, schemaProblems(document, documented(route), response.body)]).toEqual([route, []]);
    }

    const org = await createOrg(t);
    const app = await createAppRow(t, org);
    const tenant = { 'X-Bundle-ID': app.bundleId, 'X-Team-ID': app.teamId };
    const challenge = await t.http().get('/api/v1/attestation/challenge').set(tenant).expect(200);
    expect(schemaProblems(document, documented('GET /api/v1/attestation/challenge'), challenge.body)).toEqual([]);
    const apiKey = await createApiKey(t, org, ['flags:read']);
    const flags = await t.http().get('/api/v1/flags').set(tenant).set('Authorization', `Bearer ${apiKey}`).expect(200);
    expect(schemaProblems(document, documented('GET /api/v1/flags'), flags.body)).toEqual([]);
    for (const route of ['POST /api/v1/attestation/validate', 'POST /api/v1/attestation/refresh']) {
      expect(documented(route)).toEqual({ $ref: '#/components/schemas/AttestationToken' });
    }
    const debugToken = `dbg_${'d'.repeat(43)}`;
    await t.sql(
      `INSERT INTO debug_tokens (organization_id, app_id, name, prefix, token_hash) VALUES ($1, $2, 'CI', 'dbg_dddddddd', $3)`,
      [org.id, app.id, createHash('sha256').update(debugToken).digest('hex')],
    );
    const debug = await t.http().post('/api/v1/attestation/debug').set(tenant).send({ debugToken }).expect(200);
    expect(schemaProblems(document, documented('POST /api/v1/attestation/debug'), debug.body)).toEqual([]);
    const verifier = await createApiKey(t, org, ['tokens:verify']);
    for (const token of [debug.body.token as string, 'garbage']) {
      const verdict = await t
        .http()
        .post('/api/v1/tokens/verify')
        .set('Authorization', `Bearer ${verifier}`)
        .send({ token })
        .expect(200);
      expect(schemaProblems(document, documented('POST /api/v1/tokens/verify'), verdict.body)).toEqual([]);
    }

    // Errors answer the documented envelope, with `fields` on 422.
    const invalid = await t.http().post('/api/v1/attestation/validate').set(tenant).send({ keyId: 7 }).expect(422);
    expect(ops.get('POST /api/v1/attestation/validate')!.responses['422']).toEqual({
      $ref: '#/components/responses/ValidationFailed',
    });
    const validationError = resolve(document, { $ref: '#/components/responses/ValidationFailed' }).content[
      'application/json'
    ].schema;
    expect(schemaProblems(document, validationError, invalid.body)).toEqual([]);
    const unknownApp = await t
      .http()
      .get('/api/v1/attestation/challenge')
      .set({ ...tenant, 'X-Team-ID': 'ZZZZZZZZZZ' })
      .expect(404);
    expect(schemaProblems(document, { $ref: '#/components/schemas/Error' }, unknownApp.body)).toEqual([]);
  });

  it('lints clean with @redocly/cli (no error, no warning)', async () => {
    // Where .redocly.lint-ignore.yaml names it.
    const directory = join(root, 'var/openapi-lint');
    mkdirSync(directory, { recursive: true });
    const file = join(directory, 'openapi.json');
    writeFileSync(file, JSON.stringify(document, null, 2));
    const cli = join(root, 'node_modules/@redocly/cli/bin/cli.js');
    const config = join(root, 'redocly.yaml');
    const run = await promisify(execFile)(
      process.execPath,
      [cli, 'lint', file, `--config=${config}`, '--format=json'],
      { cwd: root, env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' } },
    ).catch((error: { stdout: string; stderr: string }) => error);
    const report = JSON.parse(run.stdout.slice(run.stdout.indexOf('{'))) as {
      totals: { errors: number; warnings: number };
      problems: { ruleId: string; message: string; location: { pointer: string }[] }[];
    };
    const problems = report.problems.map((p) => `${p.ruleId} ${p.location[0]?.pointer}: ${p.message}`);
    expect(problems).toEqual([]);
    expect(report.totals).toMatchObject({ errors: 0, warnings: 0 });
  }, 60_000);

  it('is built once per process', async () => {
    const service = t.app.get(OpenApiDocumentService);
    expect(service.get()).toBe(service.get());
    const again = await t.http().get('/api/v1/openapi.json').expect(200);
    expect(again.body).toEqual(document);
  });

  it('serves the interactive page at /docs without credentials', async () => {
    const page = await t.http().get('/docs').expect(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(page.text).toContain('<div id="swagger-ui">');
    const init = await t.http().get('/docs/swagger-ui-init.js').expect(200);
    expect(init.text).toContain('/api/v1/openapi.json');
    expect(init.text).toContain('"openapi": "3.1.0"');
    await t.http().get('/docs/swagger-ui-bundle.js').expect(200);
  });
});
