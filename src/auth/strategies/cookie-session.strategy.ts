import { Injectable } from '@nestjs/common';
import type { Request } from 'express';
import { SessionResolver } from '../session-resolver.js';
import { RequestStrategy, STRATEGY, type Principal } from './principal.js';

/**
 * The dashboard's cookie session (express-session, stored in PostgreSQL): the signed-in user and
 * the active organization, re-read on every request. No session: the next strategy is tried.
 */
@Injectable()
export class CookieSessionStrategy extends RequestStrategy {
  readonly strategyName = STRATEGY.cookieSession;

  constructor(private readonly sessions: SessionResolver) {
    super();
  }

  async validate(request: Request): Promise<Principal | null> {
    const session = await this.sessions.resolve(request);
    return session ? { kind: 'session', session } : null;
  }
}
