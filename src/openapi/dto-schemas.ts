import type { Type } from '@nestjs/common';
// The CommonJS build, the one the application's `import 'class-transformer'` loads too.
import { defaultMetadataStorage } from 'class-transformer/cjs/storage.js';
import { IS_DATE, IS_ISO8601, ValidationTypes } from 'class-validator';
import type { ValidationMetadata } from 'class-validator/types/metadata/ValidationMetadata.js';
import { targetConstructorToSchema } from 'class-validator-jsonschema';
import type { SchemaObject } from './openapi-types.js';

export const SCHEMA_REF_PREFIX = '#/components/schemas/';

/**
 * JSON Schemas of the request DTOs, read from the class-validator decorators every DTO already
 * carries (the same metadata the validation pipe enforces), so the document cannot drift from
 * what the service accepts. Nested DTOs become components of their own, referenced by class name.
 */
export class DtoSchemas {
  readonly schemas: Record<string, SchemaObject> = {};
  private readonly classes = new Map<string, Type>();
  private readonly pending: Type[] = [];

  private readonly options: Parameters<typeof targetConstructorToSchema>[1] = {
    refPointerPrefix: SCHEMA_REF_PREFIX,
    classTransformerMetadataStorage: defaultMetadataStorage,
    additionalConverters: {
      // class-validator 0.15 takes a function for MinDate/MaxDate; the library expects a Date.
      minDate: { type: 'string', format: 'date-time' },
      // The library's date-or-date-time `oneOf` for these overlaps (both are strings): one schema each.
      [IS_DATE]: { type: 'string', format: 'date-time' },
      [IS_ISO8601]: { type: 'string', description: 'An ISO 8601 date or date-time.' },
      maxDate: { type: 'string', format: 'date-time' },
      [ValidationTypes.NESTED_VALIDATION]: (meta: ValidationMetadata) => this.typeSchema(nestedType(meta)) as never,
      [ValidationTypes.CUSTOM_VALIDATION]: (meta: ValidationMetadata) => this.typeSchema(designType(meta)) as never,
    },
  };

  /** A reference to the class's schema, generating it (and those of its nested DTOs) once. */
  ref(type: Type): SchemaObject {
    const schema = this.typeSchema(type);
    this.drain();
    return schema;
  }

  /** The schema of a class's properties (for query DTOs, which become one parameter each). */
  resolve(type: Type): SchemaObject {
    const ref = this.ref(type).$ref;
    return typeof ref === 'string' ? (this.schemas[ref.slice(SCHEMA_REF_PREFIX.length)] ?? {}) : {};
  }

  private typeSchema(type: unknown): SchemaObject {
    if (type === String) return { type: 'string' };
    if (type === Number) return { type: 'number' };
    if (type === Boolean) return { type: 'boolean' };
    if (type === Date) return { type: 'string', format: 'date-time' };
    if (type === Array) return { type: 'array' };
    if (typeof type !== 'function' || type === Object || !type.name) return {};
    const known = this.classes.get(type.name);
    if (known && known !== type)
      throw new Error(`Two DTO classes are named ${type.name}: rename one, the document keys schemas by class name`);
    if (!known) {
      this.classes.set(type.name, type as Type);
      this.pending.push(type as Type);
    }
    return { $ref: SCHEMA_REF_PREFIX + type.name };
  }

  private drain(): void {
    for (let type = this.pending.shift(); type; type = this.pending.shift()) {
      const generated = targetConstructorToSchema(type, this.options) as SchemaObject;
      // The validation pipe refuses properties a DTO does not declare (forbidNonWhitelisted).
      this.schemas[type.name] = normalize({
        type: 'object',
        properties: {},
        ...generated,
        additionalProperties: false,
      });
    }
  }
}

function nestedType(meta: ValidationMetadata): unknown {
  const typeMetadata = defaultMetadataStorage.findTypeMetadata(meta.target as Type, meta.propertyName);
  return typeMetadata ? typeMetadata.typeFunction() : designType(meta);
}

function designType(meta: ValidationMetadata): unknown {
  return typeof meta.target === 'function'
    ? Reflect.getMetadata('design:type', meta.target.prototype as object, meta.propertyName)
    : undefined;
}

const SCHEMA_MAPS = new Set(['properties', 'patternProperties', '$defs', 'dependentSchemas']);
const SCHEMA_LISTS = new Set(['allOf', 'anyOf', 'oneOf', 'prefixItems']);
const SCHEMA_VALUES = new Set(['items', 'additionalProperties', 'not', 'contains', 'if', 'then', 'else']);

/** OpenAPI 3.0's `nullable`, which some converters produce, in its 3.1 (JSON Schema 2020-12) form. */
export function normalize(schema: SchemaObject): SchemaObject {
  const result: SchemaObject = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === 'nullable') continue;
    if (SCHEMA_MAPS.has(key) && isObject(value)) {
      result[key] = Object.fromEntries(Object.entries(value).map(([name, item]) => [name, normalizeValue(item)]));
    } else if (SCHEMA_LISTS.has(key) && Array.isArray(value)) {
      result[key] = value.map(normalizeValue);
    } else if (SCHEMA_VALUES.has(key)) {
      result[key] = normalizeValue(value);
    } else {
      result[key] = value;
    }
  }
  if (schema.nullable !== true) return result;
  if (typeof result.type === 'string') return { ...result, type: [result.type, 'null'] };
  return { anyOf: [result, { type: 'null' }] };
}

function normalizeValue(value: unknown): unknown {
  return isObject(value) ? normalize(value) : value;
}

function isObject(value: unknown): value is SchemaObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
