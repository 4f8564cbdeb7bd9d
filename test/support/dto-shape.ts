// The fields a request DTO declares, read from its class-validator decorators (the metadata the
// validation pipe enforces), and a plausible valid value for each: the base that the bad-input
// generator breaks one field at a time.
import type { Type } from '@nestjs/common';
import { getMetadataStorage, ValidationTypes } from 'class-validator';
import * as fc from 'fast-check';

/** class-transformer's `@Type()` registry (no declaration ships for this entry point). */
interface TypeRegistry {
  findTypeMetadata(target: Type, property: string): { typeFunction(): unknown } | undefined;
}
// The CommonJS build, the one the application's `import 'class-transformer'` loads too.
const transformerStorage = 'class-transformer/cjs/storage.js';
const { defaultMetadataStorage } = (await import(transformerStorage)) as { defaultMetadataStorage: TypeRegistry };

export type FieldKind = 'string' | 'integer' | 'number' | 'boolean' | 'array' | 'object' | 'date' | 'unknown';

export interface FieldShape {
  readonly name: string;
  /** `@IsOptional()`: absent or null. */
  readonly nullable: boolean;
  /** `@IsOptional()` or `@ValidateIf(…)`: may be left out. */
  readonly optional: boolean;
  readonly kind: FieldKind;
  /** `@IsIn` / `@IsEnum` values. */
  readonly allowed?: readonly unknown[];
  /** A format that constrains a string beyond its length (uuid, email, url, pattern, version, …). */
  readonly format?: string;
  readonly pattern?: RegExp;
  readonly minLength?: number;
  readonly maxLength?: number;
  readonly min?: number;
  readonly max?: number;
  readonly arrayMin?: number;
  readonly maxItems?: number;
  /** The DTO of a nested object (or of each item of an array). */
  readonly nested?: Type;
  /** `each: true` validators: the constraint applies to each item of an array. */
  readonly each: boolean;
}

const FORMATS = new Set(['isUuid', 'isEmail', 'isUrl', 'matches', 'isDateString', 'isISO8601', 'isSemVer']);

/** The fields of `type`, in declaration order. */
export function dtoShape(type: Type): FieldShape[] {
  const metadata = getMetadataStorage().getTargetValidationMetadatas(type, '', true, false);
  const names = [...new Set(metadata.map((meta) => meta.propertyName))];
  return names.map((name) => {
    const own = metadata.filter((meta) => meta.propertyName === name);
    const named = (validator: string) => own.find((meta) => validatorName(meta) === validator);
    const conditional = own.filter((meta) => meta.type === ValidationTypes.CONDITIONAL_VALIDATION);
    const length = named('isLength')?.constraints as number[] | undefined;
    const nestedMeta = own.find((meta) => meta.type === ValidationTypes.NESTED_VALIDATION);
    const nested = nestedMeta
      ? (defaultMetadataStorage.findTypeMetadata(type, name)?.typeFunction() as Type | undefined)
      : undefined;
    const designType = Reflect.getMetadata('design:type', type.prototype as object, name) as unknown;
    const allowed =
      (named('isIn')?.constraints?.[0] as unknown[] | undefined) ??
      (named('isEnum') ? Object.values(named('isEnum')!.constraints[0] as object) : undefined);
    const format = own.map(validatorName).find((validator) => FORMATS.has(validator) || !KNOWN.has(validator));
    return {
      name,
      nullable: conditional.some((meta) => validatorName(meta) === 'isOptional'),
      optional: conditional.length > 0,
      kind: kindOf(own.map(validatorName), designType, Boolean(nested)),
      allowed,
      format,
      pattern: named('matches')?.constraints?.[0] as RegExp | undefined,
      minLength: length?.[0] ?? (named('minLength')?.constraints?.[0] as number | undefined),
      maxLength: length?.[1] ?? (named('maxLength')?.constraints?.[0] as number | undefined),
      min: named('min')?.constraints?.[0] as number | undefined,
      max: named('max')?.constraints?.[0] as number | undefined,
      arrayMin: named('arrayMinSize')?.constraints?.[0] as number | undefined,
      maxItems: named('arrayMaxSize')?.constraints?.[0] as number | undefined,
      nested: nested && nested !== Object ? nested : undefined,
      each: own.some((meta) => meta.each),
    };
  });
}

/** Validators whose name says nothing about the format of a string. */
const KNOWN = new Set([
  'isString',
  'isInt',
  'isNumber',
  'isBoolean',
  'isArray',
  'isObject',
  'isDate',
  'isIn',
  'isEnum',
  'isLength',
  'maxLength',
  'minLength',
  'min',
  'max',
  'arrayMinSize',
  'arrayMaxSize',
  'arrayUnique',
  'arrayNotEmpty',
  'isNotEmpty',
  'isDefined',
  'isOptional',
  'minDate',
  'maxDate',
  'isPositive',
  'isNotEmptyObject',
  '',
]);

function validatorName(meta: { name?: string; type: string; constraintCls?: unknown }): string {
  if (meta.name) return meta.name;
  if (meta.type !== ValidationTypes.CUSTOM_VALIDATION || typeof meta.constraintCls !== 'function') return '';
  const [constraint] = getMetadataStorage().getTargetValidatorConstraints(meta.constraintCls);
  return constraint?.name ?? meta.constraintCls.name;
}

function kindOf(validators: string[], designType: unknown, nested: boolean): FieldKind {
  if (validators.includes('isInt')) return 'integer';
  if (validators.includes('isNumber')) return 'number';
  if (validators.includes('isBoolean')) return 'boolean';
  if (validators.includes('isArray') || designType === Array) return 'array';
  if (validators.includes('isDate') || designType === Date) return 'date';
  if (validators.includes('isObject') || (nested && designType !== Array)) return 'object';
  if (validators.some((v) => ['isString', 'isUuid', 'isEmail', 'isUrl', 'matches', 'isIn'].includes(v)))
    return 'string';
  if (designType === String) return 'string';
  if (designType === Number) return 'number';
  if (designType === Boolean) return 'boolean';
  return 'unknown';
}

/** Values the test knows are valid for a field of this name (real resource ids, say). */
export type KnownValues = Record<string, unknown>;

let sequence = 0;

/** A value that passes the field's validators, as far as its metadata tells. */
export function validValue(field: FieldShape, known: KnownValues, depth = 0): unknown {
  if (field.name in known) return known[field.name];
  const one = (): unknown => {
    if (field.allowed?.length) return field.allowed[0];
    switch (field.kind) {
      case 'integer':
      case 'number':
        return Math.min(Math.max(1, field.min ?? 1), field.max ?? 1);
      case 'boolean':
        return true;
      case 'date':
        return new Date(Date.now() + 86_400_000).toISOString();
      case 'object':
        return field.nested && depth < 4 ? validBody(field.nested, known, depth + 1) : {};
      case 'array':
      case 'string':
      case 'unknown':
        return validString(field);
    }
  };
  if (field.kind === 'array') {
    const item = field.nested && depth < 4 ? () => validBody(field.nested!, known, depth + 1) : one;
    const count = Math.max(field.arrayMin ?? 0, field.allowed || field.nested ? 1 : 0);
    return Array.from({ length: count }, field.allowed ? () => field.allowed![0] : item);
  }
  return one();
}

function validString(field: FieldShape): string {
  const n = ++sequence;
  switch (field.format) {
    case 'isUuid':
      return '00000000-0000-4000-8000-00000000000' + (n % 10);
    case 'isEmail':
      return `probe-${n}@example.com`;
    case 'isUrl':
      return 'http://127.0.0.1:9/probe';
    case 'isVersion':
      return `1.${n}.0`;
    case 'matches': {
      // A bounded draw, not fast-check's filter: a pattern whose strings rarely fit the length
      // bounds must fail here, naming the field, instead of spinning the test file for an hour.
      const fits = (s: string) => s.length >= (field.minLength ?? 1) && s.length <= (field.maxLength ?? 200);
      let sample: string | undefined;
      for (const size of ['small', 'medium', 'large'] as const) {
        const drawn = fc.stringMatching(field.pattern ?? /^x$/, { size });
        sample = fc.sample(drawn, { seed: n, numRuns: 100 }).find(fits);
        if (sample !== undefined) break;
      }
      if (sample === undefined) {
        throw new Error(`no valid sample for ${field.name} (${String(field.pattern)}) within its length bounds`);
      }
      return sample;
    }
    case undefined:
    default: {
      const text = `probe ${n}`;
      const min = field.minLength ?? 0;
      return (text.length < min ? text.padEnd(min, 'x') : text).slice(0, field.maxLength ?? text.length);
    }
  }
}

/** Every required field with a valid value. */
export function validBody(type: Type, known: KnownValues = {}, depth = 0): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (const field of dtoShape(type)) {
    if (!field.optional) body[field.name] = validValue(field, known, depth);
  }
  return body;
}

/** A string field whose content is free text: the service must store any Unicode it is given. */
export function isFreeText(field: FieldShape): boolean {
  return (
    field.kind === 'string' &&
    !field.allowed &&
    (!field.format || (field.format === 'matches' && /^\/\\S\/$/.test(String(field.pattern))))
  );
}
