// Tells an access refusal from a route's own 401 or 403: the guards are wrapped so every refusal
// is recorded under the request id, which every response carries in X-Request-ID.
import type { CanActivate, ExecutionContext, Type } from '@nestjs/common';
import type { Request } from 'express';

export interface GuardRefusals {
  /** The guard that refused the request with this id, if one did. */
  refusedBy(requestId: string | null): string | undefined;
  restore(): void;
}

export function recordGuardRefusals(guards: readonly Type<CanActivate>[]): GuardRefusals {
  const refused = new Map<string, string>();
  const originals = guards.map((guard) => {
    const prototype = guard.prototype as CanActivate;
    const original = Object.getOwnPropertyDescriptor(prototype, 'canActivate')!.value as CanActivate['canActivate'];
    prototype.canActivate = async function (this: CanActivate, context: ExecutionContext): Promise<boolean> {
      const requestId = context.switchToHttp().getRequest<Request>().requestId;
      try {
        // The service's guards are async functions: they answer a promise, never an Observable.
        const allowed = (await original.call(this, context)) as boolean;
        if (!allowed) refused.set(requestId, guard.name);
        return allowed;
      } catch (error) {
        refused.set(requestId, guard.name);
        throw error;
      }
    };
    return () => {
      prototype.canActivate = original;
    };
  });
  return {
    refusedBy: (requestId) => (requestId ? refused.get(requestId) : undefined),
    restore: () => originals.forEach((restore) => restore()),
  };
}
