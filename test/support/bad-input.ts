// Generated bad input for one route (fast-check, fixed seed): wrong types, missing and extra
// fields, oversized and deeply nested values, Unicode edge cases, malformed and oversized bodies,
// non-UUID ids and out-of-range pagination. Each case says what the service owes it:
// `refused` (a 4xx envelope and nothing written) or `edge` (any answer but a 5xx: input the
// service may accept, such as Unicode in free text, which it must then store without failing).
import type { Type } from '@nestjs/common';
import * as fc from 'fast-check';
import { dtoShape, isFreeText, validBody, validValue, type FieldShape, type KnownValues } from './dto-shape.js';
import type { Route } from './route-table.js';

export interface BadCase {
  readonly kind: string;
  /** What was broken, for the failure message. */
  readonly what: string;
  readonly expect: 'refused' | 'edge';
  /** Statuses a refusal must have; the general 4xx set when absent. */
  readonly statuses?: readonly number[];
  /** Path parameters, already URL-encoded. */
  readonly params: Record<string, string>;
  readonly query: string;
  /** A JSON value, or a string sent as the raw body. */
  readonly body?: unknown;
  readonly rawBody?: string;
}

/** The statuses a refusal of bad input may have (interface document: Errors; DESIGN.md 7). */
export const REFUSAL_STATUSES = [400, 401, 403, 404, 409, 413, 422];

/** Just over the 1 MiB body limit, and comfortably under it. */
const OVER_LIMIT = 1024 * 1024 + 1024;
const UNDER_LIMIT = 900 * 1024;

export const UNICODE_EDGES = [
  'nul \u0000 inside',
  '\u0000',
  'lone high \uD800 surrogate',
  'lone low \uDC00 surrogate',
  '\u202Eright-to-left override',
  'zero\u200Bwidth\u200Djoiners\uFEFF',
  'combining e\u0301\u0301\u0301',
  '𝕏 astral 😀 emoji 👨‍👩‍👧',
  'line\u2028separator\u2029',
  '\u0085next line \u000b vertical tab',
  '٣ arabic-indic digit',
  'quote \' " backslash \\ percent % underscore _',
] as const;

/** Nested arrays `depth` deep. */
export function deepArray(depth: number): unknown {
  let value: unknown = [];
  for (let i = 1; i < depth; i++) value = [value];
  return value;
}

function wrongValues(field: FieldShape): unknown[] {
  const nullIfNotNullable = field.nullable ? [] : [null];
  switch (field.kind) {
    case 'integer':
      return ['12', 1.5, true, {}, [], ...nullIfNotNullable];
    case 'number':
      return ['12', true, {}, [1], ...nullIfNotNullable];
    case 'boolean':
      return ['true', 1, 0, {}, [], ...nullIfNotNullable];
    case 'array':
      return ['item', { 0: 'item' }, 1, true, ...nullIfNotNullable];
    case 'object':
      return ['object', [], 1, true, ...nullIfNotNullable];
    case 'date':
      return ['not a date', {}, [], '2020-13-45T99:99:99Z', ...nullIfNotNullable];
    case 'string':
      return [12345, true, {}, ['a'], ...nullIfNotNullable];
    case 'unknown':
      return [];
  }
}

/** Out-of-range or malformed values of a numeric query parameter. */
function badNumbers(field: FieldShape): string[] {
  const values = ['abc', '1.5', '1e400', '99999999999999999999999', ' ', '1,2'];
  if (field.min !== undefined) values.push(String(field.min - 1), String(field.min - 1_000_000));
  if (field.max !== undefined) values.push(String(field.max + 1));
  return values;
}

/** Bad values for a path parameter (URL-encoded as sent). */
function badIds(uuid: boolean): { value: string; statuses?: number[] }[] {
  const statuses = uuid ? [400, 422] : undefined;
  return [
    { value: 'not-a-uuid', statuses },
    { value: '12345', statuses },
    { value: '-1', statuses },
    { value: '%00', statuses },
    { value: 'a%00b', statuses },
    { value: '..%2F..%2Fetc%2Fpasswd', statuses },
    { value: encodeURIComponent("' OR '1'='1"), statuses },
    { value: 'x'.repeat(3000), statuses },
    { value: encodeURIComponent('😀'), statuses },
    // Invalid UTF-8 (a lone surrogate as CESU bytes) and a stray percent sign.
    { value: '%ED%A0%80', statuses },
    { value: '%E0%A4%A', statuses },
    { value: encodeURIComponent('\u202Eabc'), statuses },
    { value: '00000000-0000-0000-0000-00000000000g', statuses },
    { value: '{{7*7}}', statuses },
  ];
}

function encodeQuery(query: Record<string, string | string[]>): string {
  const parts: string[] = [];
  for (const [name, value] of Object.entries(query)) {
    for (const item of Array.isArray(value) ? value : [value]) {
      parts.push(`${encodeURIComponent(name)}=${safeEncode(item)}`);
    }
  }
  return parts.join('&');
}

/** encodeURIComponent, but a lone surrogate becomes its (invalid) CESU-8 bytes instead of throwing. */
export function safeEncode(value: string): string {
  let out = '';
  for (const char of value) {
    const code = char.charCodeAt(0);
    if (char.length === 1 && code >= 0xd800 && code <= 0xdfff) {
      out += `%${(0xe0 | (code >> 12)).toString(16).toUpperCase()}%${(0x80 | ((code >> 6) & 0x3f)).toString(16).toUpperCase()}%${(0x80 | (code & 0x3f)).toString(16).toUpperCase()}`;
    } else {
      out += encodeURIComponent(char);
    }
  }
  return out;
}

export interface RouteInput {
  /** Path parameter values of real resources (URL-encoded), when the case does not break them. */
  readonly params: Record<string, string>;
  /** Values the test knows are valid for fields of these names. */
  readonly known: KnownValues;
}

/**
 * `count` cases for the route, drawn with `seed`: reproducible runs, and a different mix per route.
 */
export function badInputCases(route: Route, input: RouteInput, count: number, seed: number): BadCase[] {
  const arbitraries: fc.Arbitrary<BadCase>[] = [];
  const writes = route.method === 'post' || route.method === 'put' || route.method === 'patch';
  const queryShape = route.query ? dtoShape(route.query) : [];
  const baseQuery: Record<string, string> = {};
  for (const field of queryShape) {
    const known = input.known[field.name];
    if (!field.optional) baseQuery[field.name] = typeof known === 'string' ? known : 'probe-subject';
  }
  const base = {
    params: input.params,
    query: encodeQuery(baseQuery),
  };

  if (route.body) arbitraries.push(...bodyCases(route.body, input, base));
  if (writes) {
    // Whatever the route does with a body, these never get past the body parser.
    arbitraries.push(
      fc
        .constantFrom(
          { kind: 'malformed JSON', what: '{"a":', rawBody: '{"a":', statuses: [400] },
          { kind: 'malformed JSON', what: "{'single': 'quotes'}", rawBody: "{'single': 'quotes'}", statuses: [400] },
          { kind: 'malformed JSON', what: 'two documents', rawBody: '{}{}', statuses: [400] },
          {
            kind: 'body over 1 MiB',
            what: `${OVER_LIMIT} bytes`,
            rawBody: JSON.stringify({ padding: 'x'.repeat(OVER_LIMIT) }),
            statuses: [413],
          },
        )
        .map((item): BadCase => ({ ...base, expect: 'refused', ...item })),
    );
  }
  for (const param of route.params) {
    arbitraries.push(
      fc.constantFrom(...badIds(param.uuid)).map(({ value, statuses }): BadCase => ({
        ...base,
        kind: param.uuid ? 'non-UUID id' : 'malformed path parameter',
        what: `:${param.name} = ${value.slice(0, 40)}`,
        expect: 'refused',
        statuses,
        params: { ...input.params, [param.name]: value },
        body: route.body ? validBody(route.body, input.known) : undefined,
      })),
    );
  }
  if (queryShape.length) arbitraries.push(...queryCases(queryShape, baseQuery, input, base, route.body));
  for (const name of route.queryNames) {
    arbitraries.push(
      fc.constantFrom<string | string[]>('', 'x'.repeat(4000), ['a', 'b'], ...UNICODE_EDGES).map((value): BadCase => ({
        ...base,
        kind: 'query parameter edge',
        what: `${name} = ${JSON.stringify(value).slice(0, 40)}`,
        expect: 'edge',
        query: encodeQuery({ ...baseQuery, [name]: value }),
      })),
    );
  }
  const sweep = route.body && route.body !== Object ? fieldSweep(route.body, input, base) : [];
  if (!arbitraries.length) return sweep;
  return [...fc.sample(fc.oneof(...arbitraries), { seed, numRuns: count }), ...sweep];
}

/**
 * Besides the sampled cases, every field of the body once (and of its nested objects): a wrong
 * type, the edges of 32-bit and safe integers for numbers, and Unicode for free text.
 */
function fieldSweep(type: Type, input: RouteInput, base: Pick<BadCase, 'params' | 'query'>, depth = 0): BadCase[] {
  const valid = validBody(type, input.known);
  const cases: BadCase[] = [];
  for (const field of dtoShape(type)) {
    const body = (value: unknown) => ({ ...valid, [field.name]: value });
    const [wrong] = wrongValues(field);
    if (wrong !== undefined) {
      cases.push({
        ...base,
        kind: 'wrong type (every field)',
        what: `${field.name} = ${JSON.stringify(wrong)}`,
        expect: 'refused',
        body: body(wrong),
      });
    }
    if (field.kind === 'integer' || field.kind === 'number') {
      for (const value of [2 ** 31, 1e20, -(2 ** 31) - 1]) {
        const outside =
          (field.max !== undefined && value > field.max) || (field.min !== undefined && value < field.min);
        cases.push({
          ...base,
          kind: 'number out of range (every field)',
          what: `${field.name} = ${value}`,
          expect: outside ? 'refused' : 'edge',
          body: body(value),
        });
      }
    }
    if (isFreeText(field)) {
      cases.push({
        ...base,
        kind: 'unicode (every field)',
        what: field.name,
        expect: 'edge',
        body: body('𝕏 😀 e\u0301 \u202Eabc \u200B٣'),
      });
    }
    if (field.nested && field.kind === 'object' && depth < 2) {
      for (const inner of fieldSweep(field.nested, input, base, depth + 1)) {
        cases.push({ ...inner, what: `${field.name}.${inner.what}`, body: body(inner.body) });
      }
    }
  }
  return cases;
}

function bodyCases(type: Type, input: RouteInput, base: Pick<BadCase, 'params' | 'query'>): fc.Arbitrary<BadCase>[] {
  const typed = type !== Object;
  const fields = typed ? dtoShape(type) : [];
  const valid = typed ? validBody(type, input.known) : {};
  const withField = (field: FieldShape, value: unknown) => ({ ...valid, [field.name]: value });
  const arbitraries: fc.Arbitrary<BadCase>[] = [
    fc
      .constantFrom<[string, string, 'refused' | 'edge']>(
        ['[]', 'an array', typed ? 'refused' : 'edge'],
        ['"text"', 'a JSON string', 'refused'],
        ['123', 'a JSON number', 'refused'],
        ['null', 'JSON null', 'refused'],
        ['true', 'JSON true', 'refused'],
        [JSON.stringify(deepArray(1000)), 'arrays nested 1000 deep', 'refused'],
        [`${'{"a":'.repeat(1000)}1${'}'.repeat(1000)}`, 'objects nested 1000 deep', 'refused'],
      )
      .map(([rawBody, what, expect]): BadCase => ({ ...base, kind: 'body of the wrong shape', what, expect, rawBody })),
  ];
  if (!typed) return arbitraries;

  arbitraries.push(
    fc
      .constantFrom('isAdmin', 'organizationId', 'organization_id', '__proto__', 'constructor', 'createdAt', 'zzz')
      .filter((name) => !fields.some((field) => field.name === name))
      .map((name): BadCase => ({
        ...base,
        kind: 'extra field',
        what: name,
        expect: 'refused',
        rawBody: JSON.stringify(valid).replace(
          /^\{/,
          `{"${name}":{"polluted":true}${Object.keys(valid).length ? ',' : ''}`,
        ),
      })),
  );
  const typedFields = fields.filter((field) => wrongValues(field).length);
  if (typedFields.length) {
    arbitraries.push(
      fc.constantFrom(...typedFields).chain((field) =>
        fc.constantFrom(...wrongValues(field)).map((value): BadCase => ({
          ...base,
          kind: 'wrong type',
          what: `${field.name} = ${JSON.stringify(value)}`,
          expect: 'refused',
          body: withField(field, value),
        })),
      ),
    );
  }
  const required = fields.filter((field) => !field.optional);
  if (required.length) {
    arbitraries.push(
      fc.constantFrom(...required).map((field): BadCase => {
        const body = { ...valid };
        delete body[field.name];
        return { ...base, kind: 'missing field', what: field.name, expect: 'refused', body };
      }),
    );
  }
  const numbers = fields.filter((field) => field.kind === 'integer' || field.kind === 'number');
  if (numbers.length) {
    arbitraries.push(
      fc.constantFrom(...numbers).chain((field) =>
        fc.constantFrom(1e20, -1e20, 2 ** 31, -(2 ** 31) - 1, 2 ** 53 + 2, 1e308, -0.5).map((value): BadCase => {
          const outside =
            (field.max !== undefined && value > field.max) ||
            (field.min !== undefined && value < field.min) ||
            (field.kind === 'integer' && !Number.isInteger(value));
          return {
            ...base,
            kind: 'number out of range',
            what: `${field.name} = ${value}`,
            expect: outside ? 'refused' : 'edge',
            body: withField(field, value),
          };
        }),
      ),
    );
  }
  const nested = fields.filter((field) => field.nested && field.kind === 'object');
  if (nested.length) {
    arbitraries.push(
      fc.constantFrom(...nested).chain((field) => {
        const inner = dtoShape(field.nested!).filter((candidate) => wrongValues(candidate).length);
        if (!inner.length)
          return fc.constant<BadCase>({
            ...base,
            kind: 'wrong type',
            what: field.name,
            expect: 'refused',
            body: withField(field, 'x'),
          });
        return fc.constantFrom(...inner).chain((innerField) =>
          fc.constantFrom(...wrongValues(innerField)).map((value): BadCase => ({
            ...base,
            kind: 'wrong type in a nested object',
            what: `${field.name}.${innerField.name} = ${JSON.stringify(value)}`,
            expect: 'refused',
            body: withField(field, { ...validBody(field.nested!, input.known), [innerField.name]: value }),
          })),
        );
      }),
    );
  }
  const arrays = fields.filter((field) => field.kind === 'array');
  if (arrays.length) {
    arbitraries.push(
      fc.constantFrom(...arrays).map((field): BadCase => {
        const item = (validValue(field, input.known) as unknown[])[0] ?? 'item';
        return {
          ...base,
          kind: 'huge array',
          what: `${field.name} with 20000 items`,
          // Repeated items may be de-duplicated before any size limit applies: no 5xx is the rule.
          expect: 'edge',
          body: withField(
            field,
            Array.from({ length: 20_000 }, () => item),
          ),
        };
      }),
    );
  }
  const scalars = fields.filter((field) => ['string', 'integer', 'number', 'boolean', 'date'].includes(field.kind));
  if (scalars.length) {
    arbitraries.push(
      fc.constantFrom(...scalars).map((field): BadCase => ({
        ...base,
        kind: 'deep JSON',
        what: `${field.name} = arrays nested 1000 deep`,
        expect: 'refused',
        body: withField(field, deepArray(1000)),
      })),
    );
  }
  const strings = fields.filter((field) => field.kind === 'string');
  if (strings.length) {
    arbitraries.push(
      fc.constantFrom(...strings).chain((field) =>
        fc.constantFrom(...UNICODE_EDGES).map((value): BadCase => ({
          ...base,
          kind: 'unicode',
          what: `${field.name} = ${JSON.stringify(value)}`,
          expect: isFreeText(field) ? 'edge' : 'refused',
          body: withField(field, value),
        })),
      ),
      fc.constantFrom(...strings).map((field): BadCase => {
        const limited = field.maxLength !== undefined && field.maxLength < UNDER_LIMIT;
        return {
          ...base,
          kind: 'huge string',
          what: `${field.name} = ${UNDER_LIMIT} characters${limited ? ` (max ${field.maxLength})` : ' (no declared maximum)'}`,
          expect: limited || !isFreeText(field) ? 'refused' : 'edge',
          body: withField(field, 'x'.repeat(UNDER_LIMIT)),
        };
      }),
    );
  }
  return arbitraries;
}

function queryCases(
  shape: FieldShape[],
  baseQuery: Record<string, string>,
  input: RouteInput,
  base: Pick<BadCase, 'params' | 'query'>,
  body: Type | null,
): fc.Arbitrary<BadCase>[] {
  const withQuery = (name: string, value: string | string[]) => encodeQuery({ ...baseQuery, [name]: value });
  const bodyValue = body ? validBody(body, input.known) : undefined;
  const cases: fc.Arbitrary<BadCase>[] = [
    fc.constantFrom('bogus', 'organization_id', '__proto__').map((name): BadCase => ({
      ...base,
      kind: 'unknown query parameter',
      what: name,
      expect: 'refused',
      query: withQuery(name, '1'),
      body: bodyValue,
    })),
  ];
  const numeric = shape.filter((field) => field.kind === 'integer' || field.kind === 'number');
  if (numeric.length) {
    cases.push(
      fc.constantFrom(...numeric).chain((field) =>
        fc.constantFrom(...badNumbers(field), ['1', '2']).map((value): BadCase => ({
          ...base,
          kind: 'bad pagination or number',
          what: `${field.name} = ${JSON.stringify(value)}`,
          expect: 'refused',
          query: withQuery(field.name, value),
          body: bodyValue,
        })),
      ),
    );
  }
  const constrained = shape.filter((field) => field.kind === 'string' && !isFreeText(field));
  if (constrained.length) {
    cases.push(
      fc.constantFrom(...constrained).chain((field) =>
        fc
          .constantFrom('bogus', 'not-a-uuid', '\u0000', '😀', ...(field.allowed ? [['a', 'b']] : []))
          .map((value): BadCase => ({
            ...base,
            kind: 'bad enum or id in query',
            what: `${field.name} = ${JSON.stringify(value)}`,
            expect: 'refused',
            query: withQuery(field.name, value),
            body: bodyValue,
          })),
      ),
    );
  }
  const required = shape.filter((field) => !field.optional);
  for (const field of required) {
    const rest = { ...baseQuery };
    delete rest[field.name];
    cases.push(
      fc.constant<BadCase>({
        ...base,
        kind: 'missing query parameter',
        what: field.name,
        expect: 'refused',
        query: encodeQuery(rest),
        body: bodyValue,
      }),
    );
  }
  const text = shape.filter(isFreeText);
  if (text.length) {
    cases.push(
      fc.constantFrom(...text).chain((field) =>
        fc.constantFrom(...UNICODE_EDGES, 'x'.repeat(4000), '%', '%_\\').map((value): BadCase => ({
          ...base,
          kind: 'unicode in query',
          what: `${field.name} = ${JSON.stringify(value).slice(0, 40)}`,
          expect: field.maxLength !== undefined && value.length > field.maxLength ? 'refused' : 'edge',
          query: withQuery(field.name, value),
          body: bodyValue,
        })),
      ),
    );
  }
  return cases;
}
