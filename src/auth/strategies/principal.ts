import { PassportStrategy } from '@nestjs/passport';
import type { Request } from 'express';
import { Strategy } from 'passport-custom';
import type { AuthenticatedKey } from '../../api-keys/api-keys.service.js';
import type { DeviceToken } from '../../device-tokens/device-token-verifier.js';
import type { Role } from '../../common/access/access.decorator.js';
import type { ResolvedSession } from '../session-resolver.js';

/**
 * Who a passport strategy found behind a request, before the access guard decides whether that
 * caller may use the route (roles, scopes, the tenant's app).
 */
export type Principal =
  | { readonly kind: 'session'; readonly session: ResolvedSession }
  | { readonly kind: 'apiKey'; readonly found: AuthenticatedKey; readonly role: Role | null }
  | { readonly kind: 'deviceToken'; readonly claims: DeviceToken };

/** The passport strategy names, one per credential. */
export const STRATEGY = {
  cookieSession: 'cookie-session',
  apiKey: 'api-key',
  deviceToken: 'device-token',
} as const;

const notRegisteredGlobally = { use: () => notRegisteredGlobally };

/**
 * A request strategy (`passport-custom`) through `@nestjs/passport`, whose `validate(request)`
 * answers a principal, null (no such credential: the next strategy is tried) or throws (a bad
 * credential: refused with that answer). It is registered under its name on its application's own
 * Passport instance (AccessModule), never on passport's process-wide one, so two applications in
 * one process (the tests' instances) each authenticate with their own services.
 */
export abstract class RequestStrategy extends PassportStrategy(Strategy) {
  abstract readonly strategyName: string;

  abstract override validate(request: Request): Promise<Principal | null>;

  /** Where `@nestjs/passport` would register the strategy: nowhere (see above). */
  getPassportInstance(): typeof notRegisteredGlobally {
    return notRegisteredGlobally;
  }
}
