import { Param, ParseUUIDPipe } from '@nestjs/common';
import { invalidField } from '../errors/app-exception.js';

/** The check of a path parameter that must be a UUID: 400 naming the parameter otherwise. */
export const uuidPipe = (name: string) =>
  new ParseUUIDPipe({ exceptionFactory: () => invalidField(name, 'must be a UUID') });

/** A path parameter that must be a UUID: 400 naming the parameter otherwise. */
export const UuidParam = (name: string) => Param(name, uuidPipe(name));

/**
 * A pipe over the whole params object (`@Param(pipe)`) that requires some of them to be UUIDs
 * says which, so the route tables (OpenAPI, robustness tests) know them as they know a
 * `UuidParam`.
 */
export interface DeclaresUuidParams {
  readonly uuidParams: readonly string[];
}

/** The UUID path parameters a whole-params pipe declares (`DeclaresUuidParams`); none otherwise. */
export function declaredUuidParams(pipe: unknown): readonly string[] {
  const declared: unknown = (pipe as Partial<DeclaresUuidParams> | null | undefined)?.uuidParams;
  return Array.isArray(declared) ? declared.filter((name): name is string => typeof name === 'string') : [];
}
