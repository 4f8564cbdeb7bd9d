import { HttpException, HttpStatus } from '@nestjs/common';

export interface FieldError {
  readonly field: string;
  readonly message: string;
}

export interface AppExceptionOptions {
  readonly hint?: string;
  readonly fields?: readonly FieldError[];
  /** Extra top-level body members some errors document (for example 402 `quota_exceeded`). */
  readonly body?: Record<string, unknown>;
  readonly headers?: Record<string, string>;
}

/**
 * Every error the service answers with: a status, a stable `code` and a readable message.
 * Features subclass or call the helpers below; the global filter writes the envelope.
 */
export class AppException extends HttpException {
  constructor(
    status: number,
    readonly code: string,
    message: string,
    readonly details: AppExceptionOptions = {},
  ) {
    super(message, status);
  }
}

export const GENERIC_CODES: Readonly<Record<number, string>> = {
  400: 'bad_request',
  401: 'unauthorized',
  402: 'payment_required',
  403: 'forbidden',
  404: 'not_found',
  405: 'method_not_allowed',
  409: 'conflict',
  410: 'gone',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  422: 'unprocessable_entity',
  429: 'rate_limited',
  500: 'internal_error',
  503: 'service_unavailable',
};

export function codeForStatus(status: number): string {
  return GENERIC_CODES[status] ?? (status >= 500 ? 'internal_error' : 'bad_request');
}

export const badRequest = (message: string, options?: AppExceptionOptions) =>
  new AppException(HttpStatus.BAD_REQUEST, 'bad_request', message, options);
export const unauthorized = (message = 'Authentication required', options?: AppExceptionOptions) =>
  new AppException(HttpStatus.UNAUTHORIZED, 'unauthorized', message, options);
export const forbidden = (message = 'You do not have access to this resource', options?: AppExceptionOptions) =>
  new AppException(HttpStatus.FORBIDDEN, 'forbidden', message, options);
export const notFound = (what = 'Resource', options?: AppExceptionOptions) =>
  new AppException(HttpStatus.NOT_FOUND, 'not_found', `${what} not found`, options);
export const conflict = (message: string, options?: AppExceptionOptions) =>
  new AppException(HttpStatus.CONFLICT, 'conflict', message, options);
export const gone = (message: string, options?: AppExceptionOptions) =>
  new AppException(HttpStatus.GONE, 'gone', message, options);
/**
 * Every 429 says how long to wait, in `Retry-After` and in its sentence: the wait is a required
 * argument, so no refusal can be built without it.
 */
export const tooManyRequests = (message: string, retryAfterSeconds: number, options: AppExceptionOptions = {}) => {
  const seconds = Math.max(1, Math.ceil(retryAfterSeconds));
  return new AppException(
    HttpStatus.TOO_MANY_REQUESTS,
    'rate_limited',
    `${message} Try again in ${seconds} ${seconds === 1 ? 'second' : 'seconds'}.`,
    { ...options, headers: { ...options.headers, 'Retry-After': String(seconds) } },
  );
};
/**
 * A wrong e-mail or password. The login route's lockout answers the same, so that an attacker
 * cannot tell a locked-out address from a wrong password: one factory for both features.
 */
export const invalidCredentials = () =>
  new AppException(HttpStatus.UNAUTHORIZED, 'invalid_credentials', 'Invalid e-mail or password');
export const serviceUnavailable = (message: string, options?: AppExceptionOptions) =>
  new AppException(HttpStatus.SERVICE_UNAVAILABLE, 'service_unavailable', message, options);

/** Invalid input, naming each field: 422 with `fields` unless the route documents 400. */
export class ValidationFailedException extends AppException {
  constructor(readonly fieldErrors: readonly FieldError[]) {
    super(HttpStatus.UNPROCESSABLE_ENTITY, 'unprocessable_entity', describeFields(fieldErrors), {
      fields: fieldErrors,
    });
  }
}

export function describeFields(fields: readonly FieldError[]): string {
  return fields.map((f) => `${f.field}: ${f.message}`).join('; ');
}

/** A 400 that still names the field, for the routes whose documented status for bad input is 400. */
export function invalidField(field: string, message: string): AppException {
  return badRequest(`${field}: ${message}`, { hint: `Check the "${field}" field` });
}
