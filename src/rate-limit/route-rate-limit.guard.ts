import { createHash } from 'node:crypto';
import {
  applyDecorators,
  HttpException,
  HttpStatus,
  Injectable,
  RequestMethod,
  SetMetadata,
  UseGuards,
  UseInterceptors,
  type CallHandler,
  type CanActivate,
  type ExecutionContext,
  type NestInterceptor,
} from '@nestjs/common';
import { HTTP_CODE_METADATA } from '@nestjs/common/constants.js';
import { Reflector } from '@nestjs/core';
import type { Request } from 'express';
import { catchError, from, mergeMap, type Observable } from 'rxjs';
import { AppException } from '../common/errors/app-exception.js';
import { ipSubject } from './per-ip-limits.js';
import { RateLimitService, rateLimitExceeded } from './rate-limit.service.js';
import { ROUTE_LIMITS, ROUTE_LIMITS_KEY, type RouteLimit, type RouteLimitName } from './route-limits.js';

/** A budget spent only by some answers, looked at by the guard and spent by the interceptor. */
interface PendingLimit {
  readonly name: RouteLimitName;
  readonly subject: string;
  readonly limit: RouteLimit;
}

declare module 'express-serve-static-core' {
  interface Request {
    pendingRouteLimits?: PendingLimit[];
  }
}

/**
 * Enforces the limits a route declares with `@RateLimit(...)`, after the access guard (so SDK
 * limits can count by the app it resolved), on the service's sliding-window store (Redis across
 * instances, or in process; failing open). A refusal is the service's 429 with `Retry-After` and
 * its seconds in the sentence, or, for an account's failed sign-ins, exactly the wrong-password
 * answer. A budget spent only by some answers (`spentBy`: failed sign-ins, accepted sign-ups) is
 * looked at here and spent by `RouteRateLimitInterceptor` before the answer is written.
 */
@Injectable()
export class RouteRateLimitGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly limits: RateLimitService,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const names = this.reflector.getAllAndMerge<RouteLimitName[]>(ROUTE_LIMITS_KEY, [
      context.getHandler(),
      context.getClass(),
    ]);
    if (!names.length) return true;
    const request = context.switchToHttp().getRequest<Request>();
    for (const name of names) await this.enforce(name, ROUTE_LIMITS[name], request);
    return true;
  }

  private async enforce(name: RouteLimitName, limit: RouteLimit, request: Request): Promise<void> {
    const subject = limitSubject(limit, request);
    // Nothing to count by (no e-mail in the body): validation refuses the request anyway.
    if (!subject) return;
    if (limit.spentBy === undefined) {
      const decision = await this.limits.consume(name, subject, limit.limit, limit.windowMs);
      if (!decision.allowed) throw refusal(limit, () => rateLimitExceeded(decision));
      return;
    }
    const state = await this.limits.peek(name, subject, limit.limit, limit.windowMs);
    if (!state.allowed) throw refusal(limit, () => rateLimitExceeded(state));
    (request.pendingRouteLimits ??= []).push({ name, subject, limit });
  }
}

/**
 * Spends the budgets that only some answers spend, once the handler's outcome (its status, or the
 * status of what it threw) is known and before the answer is written, so the next request, on any
 * instance, already sees it.
 */
@Injectable()
export class RouteRateLimitInterceptor implements NestInterceptor {
  constructor(
    private readonly reflector: Reflector,
    private readonly limits: RateLimitService,
  ) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const request = context.switchToHttp().getRequest<Request>();
    const pending = request.pendingRouteLimits;
    if (!pending?.length) return next.handle();
    const spend = async (status: number) => {
      for (const { name, subject, limit } of pending) {
        if (limit.spentBy === status) await this.limits.consume(name, subject, limit.limit, limit.windowMs);
      }
    };
    const success =
      this.reflector.get<number | undefined>(HTTP_CODE_METADATA, context.getHandler()) ??
      (request.method === RequestMethod[RequestMethod.POST] ? 201 : 200);
    return next.handle().pipe(
      mergeMap((value: unknown) => from(spend(success).then((): unknown => value))),
      catchError((error: unknown) =>
        from(
          spend(error instanceof HttpException ? error.getStatus() : 500).then(() => {
            throw error;
          }),
        ),
      ),
    );
  }
}

function limitSubject(limit: RouteLimit, request: Request): string | null {
  const body = request.body as Record<string, unknown> | undefined;
  switch (limit.by) {
    case 'ip':
      return ipSubject(request.ip);
    case 'app':
      return request.tenant?.appId ?? null;
    case 'email':
      return emailSubject(body?.email);
    case 'newEmail':
      return emailSubject(body?.new_email);
  }
}

/** An address counts by the SHA-256 of its trimmed lower-case form: the same mailbox, however typed. */
function emailSubject(value: unknown): string | null {
  if (typeof value !== 'string' || value.trim() === '') return null;
  return createHash('sha256').update(value.trim().toLowerCase()).digest('hex');
}

function refusal(limit: RouteLimit, tooMany: () => AppException): AppException {
  return limit.refusal === 'invalid_credentials'
    ? new AppException(HttpStatus.UNAUTHORIZED, 'invalid_credentials', 'Invalid e-mail or password')
    : tooMany();
}

/**
 * Declares the limits of a route, by name, and puts the guard and interceptor that enforce them on
 * that route alone: routes without limits (the SDK hot paths) pay nothing. Route guards run after
 * the global access guard, so a limit may count by the app it resolved.
 */
export const RateLimit = (...names: RouteLimitName[]) =>
  applyDecorators(
    SetMetadata(ROUTE_LIMITS_KEY, names),
    UseGuards(RouteRateLimitGuard),
    UseInterceptors(RouteRateLimitInterceptor),
  );
