import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import type { Request, Response } from 'express';
import { OpenApiDocumentService } from '../../src/openapi/openapi-document.service.js';
import type { OpenApiDocument } from '../../src/openapi/openapi-types.js';

/** One JSON answer of the app, by the route template that served it. */
export interface RecordedResponse {
  readonly operation: string;
  readonly status: number;
  readonly body: unknown;
}

/** What one test file's app answered, checked against its own document (written for the e2e teardown). */
export interface ResponseCheck {
  readonly file: string;
  /** Operations (`GET /api/v1/apps`) with at least one checked answer, and those with a success among them. */
  readonly exercised: string[];
  readonly succeeded: string[];
  readonly operations: number;
  readonly responses: number;
  readonly problems: string[];
}

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch'];

/**
 * Records every JSON body the app writes with `res.json` (Nest's replies and the error filter's
 * envelopes alike) for a route it matched, so the e2e suite's real traffic can be held to the
 * OpenAPI document. Per app: the patch is on this Express application's response prototype.
 */
export function recordJsonResponses(app: NestExpressApplication): RecordedResponse[] {
  const recorded: RecordedResponse[] = [];
  const express = app.getHttpAdapter().getInstance() as { response: Response };
  const prototype = express.response;
  const json = prototype.json;
  prototype.json = function recordJson(this: Response, body?: unknown) {
    const request = this.req as Request & { route?: { path?: unknown } };
    const template = request.route?.path;
    if (typeof template === 'string') {
      const path = `${request.baseUrl ?? ''}${template}`.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
      // A deep copy now: the body object may be changed after it was sent.
      recorded.push({
        operation: `${request.method} ${path}`,
        status: this.statusCode,
        body: JSON.parse(JSON.stringify(body ?? null)) as unknown,
      });
    }
    return json.call(this, body);
  } as Response['json'];
  return recorded;
}

/**
 * The document made strict for checking: an object schema that lists its properties admits no
 * others (`unevaluatedProperties: false`), so a field the service sends but the document does not
 * name is a problem, not silently accepted.
 */
function strict(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(strict);
  if (!node || typeof node !== 'object') return node;
  const result = Object.fromEntries(Object.entries(node).map(([key, value]) => [key, strict(value)]));
  if (
    'properties' in result &&
    typeof result.properties === 'object' &&
    !('additionalProperties' in result) &&
    !('unevaluatedProperties' in result)
  ) {
    result.unevaluatedProperties = false;
  }
  return result;
}

/** Checks recorded answers against the operation, status and JSON schema the document gives them. */
export class ResponseValidator {
  private readonly ajv: Ajv2020;
  private readonly compiled = new Map<string, ValidateFunction>();

  constructor(private readonly document: OpenApiDocument) {
    this.ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats.default(this.ajv);
    const base64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
    this.ajv.addFormat('byte', base64);
    this.ajv.addFormat('base64', base64);
    // The components only: the document's own references (`#/components/…`) resolve inside it.
    this.ajv.addSchema({ $id: 'openapi', components: strict(document.components) });
  }

  get operationCount(): number {
    return Object.values(this.document.paths).reduce(
      (count, item) => count + HTTP_METHODS.filter((method) => item[method]).length,
      0,
    );
  }

  /** The problems of one answer; none when it is documented and matches. */
  check(response: RecordedResponse): string[] {
    const [method, path] = response.operation.split(' ');
    const operation = this.document.paths[path]?.[method.toLowerCase()];
    const at = `${response.operation} ${response.status}`;
    if (!operation) return [`${at}: the document has no such operation`];
    const responses = operation.responses;
    const key = [String(response.status), `${String(response.status)[0]}XX`, 'default'].find((k) => responses[k]);
    if (!key) return [`${at}: the status is not documented`];
    const pointer = `/paths/${escape(path)}/${method.toLowerCase()}/responses/${key}`;
    let documented = responses[key];
    let schemaPointer = `openapi#${pointer}/content/application~1json/schema`;
    if (documented.$ref) {
      schemaPointer = `openapi#/components/responses/${documented.$ref.split('/').pop()}/content/application~1json/schema`;
      documented = this.document.components.responses?.[documented.$ref.split('/').pop() ?? ''] ?? {};
    }
    const schema = documented.content?.['application/json']?.schema;
    if (!schema) return [`${at}: a JSON body where the document says none`];
    const validate = this.validator(schemaPointer, schema);
    if (validate(response.body)) return [];
    return (validate.errors ?? []).map(
      (error) =>
        `${at}: ${error.instancePath || '(body)'} ${error.message ?? 'is invalid'}${
          error.params && 'unevaluatedProperty' in error.params ? ` (${String(error.params.unevaluatedProperty)})` : ''
        }`,
    );
  }

  /** The problems of a value against a schema of the document (an example, say). */
  problems(key: string, schema: object, value: unknown): string[] {
    const validate = this.validator(`value:${key}`, schema);
    if (validate(value)) return [];
    return (validate.errors ?? []).map((error) => `${key}: ${error.instancePath || '(value)'} ${error.message ?? ''}`);
  }

  private validator(pointer: string, schema: object): ValidateFunction {
    let validate = this.compiled.get(pointer);
    if (!validate) {
      // Response-level schemas (not in the components) are compiled with the references they hold.
      validate = this.ajv.compile(strict(withBase(schema)) as object);
      this.compiled.set(pointer, validate);
    }
    return validate;
  }
}

/** `#/components/…` inside a schema that is not itself in the components: resolved against them. */
function withBase(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(withBase);
  if (!node || typeof node !== 'object') return node;
  return Object.fromEntries(
    Object.entries(node).map(([key, value]) => [
      key,
      key === '$ref' && typeof value === 'string' && value.startsWith('#/') ? `openapi${value}` : withBase(value),
    ]),
  );
}

function escape(path: string): string {
  return path.replace(/~/g, '~0').replace(/\//g, '~1');
}

/**
 * Checks what an app recorded against the document it serves; writes the outcome where the e2e
 * global teardown sums it up (OPENAPI_CHECK_DIR), and returns the problems.
 */
export function checkRecordedResponses(
  app: NestExpressApplication,
  recorded: readonly RecordedResponse[],
  file: string,
): string[] {
  if (!recorded.length) return [];
  const validator = new ResponseValidator(app.get(OpenApiDocumentService).get());
  const problems = [...new Set(recorded.flatMap((response) => validator.check(response)))];
  const exercised = new Set(recorded.map((response) => response.operation));
  const succeeded = new Set(recorded.filter((r) => r.status < 400).map((response) => response.operation));
  const result: ResponseCheck = {
    file,
    exercised: [...exercised].sort(),
    succeeded: [...succeeded].sort(),
    operations: validator.operationCount,
    responses: recorded.length,
    problems,
  };
  const directory = process.env.OPENAPI_CHECK_DIR;
  if (directory) {
    const name = `${file.replace(/[^A-Za-z0-9.-]+/g, '_')}-${process.pid}-${Date.now()}.json`;
    writeFileSync(join(directory, name), JSON.stringify(result));
  }
  return problems;
}
