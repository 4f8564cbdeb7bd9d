import type { Type } from '@nestjs/common';
import { TransformationType } from 'class-transformer';
// The CommonJS build, the one the application's `import 'class-transformer'` loads too.
import { defaultMetadataStorage } from 'class-transformer/cjs/storage.js';
import { getMetadataStorage, IsOptional, ValidationTypes } from 'class-validator';

/** `claimKey` → `claim_key`, as a type. */
export type SnakeCase<Name extends string> = Name extends `${infer Head}${infer Tail}`
  ? `${Head extends Lowercase<Head> ? Head : `_${Lowercase<Head>}`}${SnakeCase<Tail>}`
  : Name;

/** An object type with its top-level member names in snake_case; nested members keep theirs. */
export type SnakeCased<T> = { [Key in keyof T as Key extends string ? SnakeCase<Key> : Key]: T[Key] };

export function snakeCase(name: string): string {
  return name.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);
}

export function camelCase(name: string): string {
  return name.replace(/_([a-z0-9])/g, (_match, letter: string) => letter.toUpperCase());
}

/**
 * The request DTO `source` with its property names in snake_case: the same class-validator rules
 * (a message that starts with the property name starts with its snake_case name),
 * class-transformer conversions and design types, so a snake_case surface validates, and the
 * OpenAPI document describes, exactly what the camelCase one does. Nested DTOs keep their own
 * class, as nested objects keep their schema. With `optional`, every property may be left out.
 * Extend the result to name the class: the document keys request schemas by class name.
 */
export function SnakeCaseType<T>(source: Type<T>, options: { optional: true }): Type<SnakeCased<Partial<T>>>;
export function SnakeCaseType<T>(source: Type<T>): Type<SnakeCased<T>>;
export function SnakeCaseType<T>(source: Type<T>, options: { optional?: boolean } = {}): Type<SnakeCased<T>> {
  class SnakeCaseDto {}
  const target = SnakeCaseDto as unknown as Type<SnakeCased<T>>;
  const validation = getMetadataStorage();
  const properties = new Set<string>();
  for (const metadata of validation.getTargetValidationMetadatas(source, '', false, false)) {
    const name = snakeCase(metadata.propertyName);
    const message =
      typeof metadata.message === 'string' && metadata.message.startsWith(`${metadata.propertyName} `)
        ? `${name}${metadata.message.slice(metadata.propertyName.length)}`
        : metadata.message;
    // Conditions (`@IsOptional`, `@ValidateIf`) read the object by the camelCase names.
    const condition = metadata.constraints?.[0] as Condition;
    const constraints =
      metadata.type === ValidationTypes.CONDITIONAL_VALIDATION ? [inCamelCase(condition)] : metadata.constraints;
    const validateIf = metadata.validateIf && inCamelCase(metadata.validateIf);
    validation.addValidationMetadata({ ...metadata, target, propertyName: name, message, constraints, validateIf });
    properties.add(metadata.propertyName);
  }
  for (const property of properties) {
    const name = snakeCase(property);
    const designType: unknown = Reflect.getMetadata('design:type', source.prototype as object, property);
    if (designType) Reflect.defineMetadata('design:type', designType, target.prototype as object, name);
    for (const transform of defaultMetadataStorage.findTransformMetadatas(
      source,
      property,
      TransformationType.PLAIN_TO_CLASS,
    )) {
      defaultMetadataStorage.addTransformMetadata({ ...transform, target, propertyName: name });
    }
    const type = defaultMetadataStorage.findTypeMetadata(source, property);
    if (type) defaultMetadataStorage.addTypeMetadata({ ...type, target, propertyName: name });
    if (options.optional) IsOptional()(target.prototype as object, name);
  }
  return target;
}

type Condition = (object: object, value: unknown) => boolean;

function inCamelCase(condition: Condition): Condition {
  return (object, value) => condition(fromSnakeCase<object>(object), value);
}

/** A snake_case DTO's members under their camelCase names; nested values are kept as they are. */
export function fromSnakeCase<T>(dto: SnakeCased<T>): T {
  return Object.fromEntries(Object.entries(dto).map(([name, value]) => [camelCase(name), value])) as T;
}
