import { SetMetadata, ValidationPipe, type ArgumentMetadata, type ExecutionContext } from '@nestjs/common';
import type { Reflector } from '@nestjs/core';
import type { ValidationError } from 'class-validator';
import type { Request } from 'express';
import { AppException, ValidationFailedException, describeFields, type FieldError } from '../errors/app-exception.js';
import { cacheValidationMetadata } from './metadata-cache.js';

/** Body, query and parameter validation for every route: 422 naming each field by default. */
export function createValidationPipe(): ValidationPipe {
  cacheValidationMetadata();
  return new InputValidationPipe({
    whitelist: true,
    forbidNonWhitelisted: true,
    transform: true,
    stopAtFirstError: true,
    validationError: { target: false, value: false },
    exceptionFactory: (errors) => new ValidationFailedException(flatten(errors)),
  });
}

/**
 * Refuses, before any decorator runs, input no DTO can describe: keys class-transformer drops
 * without a word (`__proto__`, `constructor`), NUL characters (PostgreSQL text cannot hold them),
 * lone surrogates (not encodable as UTF-8; validator.js's isEmail throws on them), `-0` and
 * numbers too large to be finite (`1e309`). The walk is bounded: bodies nested deeper than
 * MAX_JSON_DEPTH never get here.
 */
class InputValidationPipe extends ValidationPipe {
  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    if (metadata.type !== 'custom') {
      const problem = unacceptableInput(value, metadata.type === 'body' ? '' : (metadata.data ?? ''));
      if (problem) throw new ValidationFailedException([problem]);
    }
    return super.transform(value, metadata);
  }
}

const DROPPED_KEYS = new Set(['__proto__', 'constructor', 'prototype']);
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

function unacceptableInput(value: unknown, field: string): FieldError | null {
  if (typeof value === 'string') return unacceptableText(value, field || 'body');
  // JSON has no -0 worth keeping; JSON.parse reads 1e309 as Infinity, which no field accepts.
  if (typeof value === 'number') {
    if (Object.is(value, -0)) return { field: field || 'body', message: 'must not be negative zero' };
    if (!Number.isFinite(value)) return { field: field || 'body', message: 'must be a finite number' };
    return null;
  }
  if (typeof value !== 'object' || value === null) return null;
  if (Array.isArray(value)) {
    for (const [index, item] of value.entries()) {
      const problem = unacceptableInput(item, `${field}[${index}]`);
      if (problem) return problem;
    }
    return null;
  }
  for (const key of Object.keys(value)) {
    const path = field ? `${field}.${key}` : key;
    if (DROPPED_KEYS.has(key)) return { field: path, message: 'should not exist' };
    const problem = unacceptableText(key, path) ?? unacceptableInput((value as Record<string, unknown>)[key], path);
    if (problem) return problem;
  }
  return null;
}

function unacceptableText(text: string, field: string): FieldError | null {
  if (text.includes('\u0000')) return { field, message: 'must not contain NUL characters' };
  if (LONE_SURROGATE.test(text)) return { field, message: 'must be valid Unicode text' };
  return null;
}

function flatten(errors: ValidationError[], prefix = ''): FieldError[] {
  return errors.flatMap((error) => {
    const field = prefix ? `${prefix}.${error.property}` : error.property;
    const own = Object.values(error.constraints ?? {}).map((message) => ({
      field,
      message: message.startsWith(`${error.property} `) ? message.slice(error.property.length + 1) : message,
    }));
    return [...own, ...flatten(error.children ?? [], field)];
  });
}

const INVALID_INPUT_STATUS = 'invalidInputStatus';

/**
 * For routes whose documented status for invalid input is 400 rather than 422: the same message,
 * naming the field, with status 400 (the envelope keeps `fields` for 422 only).
 */
export const InvalidInputStatus = (status: 400) => SetMetadata(INVALID_INPUT_STATUS, status);

declare module 'express-serve-static-core' {
  interface Request {
    /** The route's documented status for invalid input, when it is 400 rather than 422. */
    invalidInputStatus?: 400;
  }
}

/**
 * Notes the route's `@InvalidInputStatus` on the request, for the error filter. Called by the
 * access guard, which runs for every route with the handler at hand; an interceptor would cost
 * an observable chain on every request, hot paths included.
 */
export function invalidInputStatusOf(reflector: Reflector, context: ExecutionContext): 400 | undefined {
  return reflector.getAllAndOverride<400 | undefined>(INVALID_INPUT_STATUS, [context.getHandler(), context.getClass()]);
}

/** A validation failure as the route documents it: 422 with `fields`, or 400 naming the field. */
export function asDocumentedStatus(error: ValidationFailedException, request: Request): AppException {
  if (request.invalidInputStatus !== 400) return error;
  const [first] = error.fieldErrors;
  return new AppException(400, 'bad_request', describeFields(error.fieldErrors), {
    hint: first ? `Check the "${first.field}" field` : undefined,
  });
}
