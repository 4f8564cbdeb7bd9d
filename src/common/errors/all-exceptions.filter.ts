import { ArgumentsHost, Catch, HttpException, type ExceptionFilter } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import type { Logger } from 'pino';
import { AppException, ValidationFailedException, codeForStatus } from './app-exception.js';
import { isConcurrentChange } from './concurrent-change.js';
import { asDocumentedStatus } from '../validation/validation.js';
import { MAX_JSON_DEPTH } from '../http/json-depth.js';

/** What body-parser (and the zlib stream behind it) passes to the error middleware: http-errors' shape. */
interface BodyParserError {
  type?: string;
  status: number;
  expose?: boolean;
  limit?: number;
  code?: string;
}

/** Writes the one error envelope for everything that goes wrong, and hides a 500's internals. */
@Catch()
export class AllExceptionsFilter implements ExceptionFilter {
  constructor(private readonly logger: Logger) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    this.respond(exception, http.getRequest<Request>(), http.getResponse<Response>());
  }

  /** Also mounted as Express error middleware, for what fails before Nest routes (body parsing). */
  readonly middleware = (error: unknown, request: Request, response: Response, _next: NextFunction): void => {
    this.respond(error, request, response);
  };

  private respond(exception: unknown, request: Request, response: Response): void {
    const requestId = request.requestId ?? '';
    const { status, body, headers } = this.describe(exception, request);
    if (status >= 500) {
      this.logger.error({ err: exception, requestId, method: request.method, path: request.path }, 'request failed');
    }
    if (response.headersSent) {
      response.end();
      return;
    }
    for (const [name, value] of Object.entries(headers)) response.setHeader(name, value);
    response.status(status).json({ ...body, requestId });
  }

  private describe(
    exception: unknown,
    request: Request,
  ): { status: number; body: Record<string, unknown>; headers: Record<string, string> } {
    if (exception instanceof ValidationFailedException) exception = asDocumentedStatus(exception, request);
    if (exception instanceof AppException) {
      const { hint, fields, body, headers } = exception.details;
      return {
        status: exception.getStatus(),
        body: {
          error: exception.message,
          code: exception.code,
          ...(hint ? { hint } : {}),
          ...(fields && exception.getStatus() === 422 ? { fields } : {}),
          ...body,
        },
        headers: headers ?? {},
      };
    }
    if (exception instanceof HttpException) {
      const status = exception.getStatus();
      const message =
        status === 404 && exception.constructor.name === 'NotFoundException' && isRouteMiss(exception)
          ? `No route for ${request.method} ${request.path}`
          : readMessage(exception);
      return { status, body: { error: message, code: codeForStatus(status) }, headers: {} };
    }
    const parserError = asBodyParserError(exception);
    if (parserError) return describeParserError(parserError);
    if (isConcurrentChange(exception)) {
      // A race with another request (a parent deleted meanwhile, a deadlock): what a retry resolves.
      this.logger.warn({ err: exception, requestId: request.requestId, path: request.path }, 'concurrent change');
      return {
        status: 409,
        body: { error: 'The resource changed while this request ran; try again', code: 'conflict' },
        headers: {},
      };
    }
    return { status: 500, body: { error: 'Internal server error', code: 'internal_error' }, headers: {} };
  }
}

function isRouteMiss(exception: HttpException): boolean {
  return /^Cannot [A-Z]+ /.test(readMessage(exception));
}

function readMessage(exception: HttpException): string {
  const response = exception.getResponse();
  if (typeof response === 'string') return response;
  const message = (response as { message?: unknown }).message;
  if (Array.isArray(message)) return message.join('; ');
  return typeof message === 'string' ? message : exception.message;
}

/**
 * A client error raised while reading the body: body-parser's (with a `type`) or a decompression
 * failure of a `Content-Encoding: gzip|deflate|br` body (zlib's, marked 4xx and exposable).
 */
function asBodyParserError(error: unknown): BodyParserError | null {
  if (typeof error !== 'object' || error === null) return null;
  const candidate = error as Partial<BodyParserError>;
  if (typeof candidate.status !== 'number') return null;
  const clientError = candidate.status >= 400 && candidate.status < 500;
  return typeof candidate.type === 'string' || (clientError && candidate.expose === true)
    ? (candidate as BodyParserError)
    : null;
}

function describeParserError(error: BodyParserError) {
  switch (error.type) {
    case 'entity.parse.failed':
      return {
        status: 400,
        body: { error: 'The request body is not valid JSON', code: 'bad_request', hint: 'Send a JSON document' },
        headers: {},
      };
    case 'entity.too.large':
      return {
        status: 413,
        body: {
          error: `The request body is larger than the ${Math.round((error.limit ?? 1048576) / 1024)} KiB limit`,
          code: 'payload_too_large',
        },
        headers: {},
      };
    case 'entity.too.deep':
      return {
        status: 400,
        body: {
          error: 'The JSON body is nested too deeply',
          code: 'json_too_deep',
          hint: `Send at most ${MAX_JSON_DEPTH} levels of nested arrays and objects`,
        },
        headers: {},
      };
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return { status: 415, body: { error: 'Unsupported body encoding', code: 'unsupported_media_type' }, headers: {} };
    case undefined:
      // zlib could not inflate a gzip, deflate or br body.
      return {
        status: 400,
        body: {
          error: 'The request body could not be decompressed',
          code: 'bad_request',
          hint: 'Send the body uncompressed, or compressed as its Content-Encoding says',
        },
        headers: {},
      };
    default:
      return {
        status: error.status >= 400 && error.status < 500 ? error.status : 400,
        body: { error: 'The request body could not be read', code: codeForStatus(error.status) },
        headers: {},
      };
  }
}
