import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { forbidden, unauthorized } from '../errors/app-exception.js';
import { ACCESS_KEY, type AccessRule } from './access.decorator.js';

/** Enforces each route's access declaration; a route without one is refused. */
@Injectable()
export class AccessGuard implements CanActivate {
  constructor(private readonly reflector: Reflector) {}

  canActivate(context: ExecutionContext): boolean {
    const rule = this.reflector.getAllAndOverride<AccessRule | undefined>(ACCESS_KEY, [
      context.getHandler(),
      context.getClass(),
    ]);
    if (!rule) throw forbidden('This route declares no access rule');
    if (rule.public) return true;
    throw unauthorized();
  }
}
