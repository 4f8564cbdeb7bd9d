import {
  applyDecorators,
  HttpException,
  Inject,
  Injectable,
  RequestMethod,
  SetMetadata,
  UseGuards,
  UseInterceptors,
  type CallHandler,
  type ExecutionContext,
  type NestInterceptor,
} from '@nestjs/common';
import { HTTP_CODE_METADATA } from '@nestjs/common/constants.js';
import { Reflector } from '@nestjs/core';
import {
  InjectThrottlerOptions,
  ThrottlerGuard,
  ThrottlerStorage,
  type ThrottlerModuleOptions,
  type ThrottlerOptions,
  type ThrottlerRequest,
} from '@nestjs/throttler';
import type { Request, Response } from 'express';
import { catchError, from, mergeMap, type Observable } from 'rxjs';
import { AppException, invalidCredentials } from '../common/errors/app-exception.js';
import { LIMITS, type Limit, type LimitName } from './limits.js';
import { RateLimitService, rateLimitExceeded, rateLimitHeaders } from './rate-limit.service.js';

export const RATE_LIMITS_KEY = 'rateLimits';

/** A budget spent only by some answers, looked at by the guard and spent by the interceptor. */
interface PendingLimit {
  readonly key: string;
  readonly limit: number;
  readonly windowMs: number;
  readonly spentBy: number;
}

declare module 'express-serve-static-core' {
  interface Request {
    pendingRateLimits?: PendingLimit[];
  }
}

/**
 * @nestjs/throttler's guard over the service's limits (limits.ts): each limit is a named throttler,
 * applied to a route only when the route declares it with `@RateLimit(...)`, counted in the one
 * sliding-window `ThrottlerStorage` (RateLimitService) by the subject the limit names. It runs
 * after the global access guard, so plan limits count by the app or key it resolved. A refusal is
 * the service's 429 with `Retry-After` and its seconds in the sentence, or, for an account's
 * failed sign-ins, exactly the wrong-password answer. Plan limits write the interface's
 * `X-RateLimit-*` headers (Reset in Unix seconds). A budget spent only by some answers (`spentBy`:
 * failed sign-ins, accepted sign-ups) is looked at here and spent by `SpentRateLimitInterceptor`.
 *
 * `canActivate` walks the route's declared throttlers only, in the order the route names them,
 * where the package's own walks every configured throttler and asks the reflector five times for
 * each: with a throttler per limit, that was the largest part of this guard's cost on the hottest
 * route. Each throttler is still resolved, counted and refused by the package's `handleRequest`
 * path over the configured options and storage.
 */
@Injectable()
export class RateLimitGuard extends ThrottlerGuard {
  constructor(
    @InjectThrottlerOptions() options: ThrottlerModuleOptions,
    @Inject(ThrottlerStorage) private readonly limits: RateLimitService,
    reflector: Reflector,
  ) {
    super(options, limits, reflector);
  }

  override async canActivate(context: ExecutionContext): Promise<boolean> {
    for (const throttler of this.declaredThrottlers(context.getHandler(), context.getClass())) {
      const ttl = throttler.ttl as number;
      const limit = typeof throttler.limit === 'function' ? await throttler.limit(context) : throttler.limit;
      const admitted = await this.handleRequest({
        context,
        limit,
        ttl,
        throttler,
        blockDuration: ttl,
        getTracker: throttler.getTracker!,
        generateKey: throttler.generateKey!,
      });
      if (!admitted) return false;
    }
    return true;
  }

  /** The throttlers a route declares with `@RateLimit`, in its order, read once per class and handler. */
  private declaredThrottlers(handler: object, classRef: object): readonly ThrottlerOptions[] {
    let ofClass = this.declared.get(classRef);
    if (!ofClass) this.declared.set(classRef, (ofClass = new WeakMap()));
    let declared = ofClass.get(handler);
    if (!declared) {
      const names = this.reflector.getAllAndMerge<LimitName[]>(RATE_LIMITS_KEY, [handler, classRef] as never);
      const byName = new Map(this.throttlers.map((throttler) => [throttler.name, throttler]));
      declared = [...new Set(names)].map((name) => {
        const throttler = byName.get(name);
        if (!throttler) throw new Error(`The rate limit ${name} is declared but not configured`);
        return throttler;
      });
      ofClass.set(handler, declared);
    }
    return declared;
  }

  private readonly declared = new WeakMap<object, WeakMap<object, readonly ThrottlerOptions[]>>();

  protected override async handleRequest({
    context,
    limit,
    ttl,
    throttler,
    getTracker,
    generateKey,
  }: ThrottlerRequest): Promise<boolean> {
    const declared: Limit = LIMITS[throttler.name as LimitName];
    const request = context.switchToHttp().getRequest<Request>();
    const tracker = await getTracker(request, context);
    // Nothing to count by (no e-mail in the body, not an API key): the limit does not apply.
    if (!tracker) return true;
    const key = generateKey(context, tracker, throttler.name!);
    if (declared.spentBy !== undefined) {
      const { decision } = await this.limits.peek(key, ttl, limit);
      if (!decision.allowed) throw refusal(declared, () => rateLimitExceeded(decision));
      (request.pendingRateLimits ??= []).push({ key, limit, windowMs: ttl, spentBy: declared.spentBy });
      return true;
    }
    const { decision } = await this.limits.increment(key, ttl, limit);
    if (!decision.allowed) throw refusal(declared, () => rateLimitExceeded(decision));
    if (declared.headers) {
      const response = context.switchToHttp().getResponse<Response>();
      for (const [name, value] of Object.entries(rateLimitHeaders(decision))) response.setHeader(name, value);
    }
    return true;
  }
}

/**
 * Spends the budgets that only some answers spend, once the handler's outcome (its status, or the
 * status of what it threw) is known and before the answer is written, so the next request, on any
 * instance, already sees it.
 */
@Injectable()
export class SpentRateLimitInterceptor implements NestInterceptor {
  constructor(
    private readonly reflector: Reflector,
    @Inject(ThrottlerStorage) private readonly limits: RateLimitService,
  ) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const request = context.switchToHttp().getRequest<Request>();
    const pending = request.pendingRateLimits;
    if (!pending?.length) return next.handle();
    const spend = async (status: number) => {
      for (const { key, limit, windowMs, spentBy } of pending) {
        if (spentBy === status) await this.limits.increment(key, windowMs, limit);
      }
    };
    const response = context.switchToHttp().getResponse<Response>();
    // A handler that writes its own answer (a page) has set its status; otherwise the route's.
    const success = () =>
      response.headersSent
        ? response.statusCode
        : (this.reflector.get<number | undefined>(HTTP_CODE_METADATA, context.getHandler()) ??
          (request.method === RequestMethod[RequestMethod.POST] ? 201 : 200));
    return next.handle().pipe(
      mergeMap((value: unknown) => from(spend(success()).then((): unknown => value))),
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

function refusal(limit: Limit, tooMany: () => AppException): AppException {
  return limit.refusal === 'invalid_credentials' ? invalidCredentials() : tooMany();
}

/**
 * Declares the limits of a route, by name, in the order they are checked, and puts the guard and
 * interceptor that enforce them on that route alone: routes without limits pay nothing for them.
 */
export const RateLimit = (...names: LimitName[]) =>
  applyDecorators(
    SetMetadata(RATE_LIMITS_KEY, names),
    UseGuards(RateLimitGuard),
    ...(names.some((name) => (LIMITS[name] as Limit).spentBy !== undefined)
      ? [UseInterceptors(SpentRateLimitInterceptor)]
      : []),
  );
