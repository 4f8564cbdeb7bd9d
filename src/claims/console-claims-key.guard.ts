import { Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import type { Request } from 'express';
import { consoleKeyRefused } from './claims.exceptions.js';

const CONSOLE_KEY_PREFIX = /^(gpat|aat)_/;

/**
 * Narrows the API keys the console claims routes accept (after the access guard resolved the
 * caller and checked scopes and, for a personal key, its user's current role): only `gpat_` and
 * `aat_` keys, as the interface document says of the console.
 */
@Injectable()
export class ConsoleClaimsKeyGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const auth = context.switchToHttp().getRequest<Request>().auth;
    if (auth?.caller.kind !== 'apiKey') return true;
    if (!CONSOLE_KEY_PREFIX.test(auth.caller.prefix)) throw consoleKeyRefused();
    return true;
  }
}
