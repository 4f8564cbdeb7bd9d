import {
  CallHandler,
  ExecutionContext,
  Injectable,
  SetMetadata,
  ValidationPipe,
  type NestInterceptor,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { ValidationError } from 'class-validator';
import { catchError, type Observable } from 'rxjs';
import { AppException, ValidationFailedException, describeFields, type FieldError } from '../errors/app-exception.js';

/** Body, query and parameter validation for every route: 422 naming each field by default. */
export function createValidationPipe(): ValidationPipe {
  return new ValidationPipe({
    whitelist: true,
    forbidNonWhitelisted: true,
    transform: true,
    stopAtFirstError: true,
    validationError: { target: false, value: false },
    exceptionFactory: (errors) => new ValidationFailedException(flatten(errors)),
  });
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

@Injectable()
export class InvalidInputStatusInterceptor implements NestInterceptor {
  constructor(private readonly reflector: Reflector) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const status = this.reflector.getAllAndOverride<number | undefined>(INVALID_INPUT_STATUS, [
      context.getHandler(),
      context.getClass(),
    ]);
    if (!status) return next.handle();
    return next.handle().pipe(
      catchError((error: unknown) => {
        if (error instanceof ValidationFailedException) {
          const [first] = error.fieldErrors;
          throw new AppException(status, 'bad_request', describeFields(error.fieldErrors), {
            hint: first ? `Check the "${first.field}" field` : undefined,
          });
        }
        throw error;
      }),
    );
  }
}
