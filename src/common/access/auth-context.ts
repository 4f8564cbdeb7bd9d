import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { Request } from 'express';
import { AppException, forbidden } from '../errors/app-exception.js';
import type { ApiKeyScope, Role } from './access.decorator.js';
import type { OrganizationId } from './tenant-id.js';

export interface SessionCaller {
  readonly kind: 'session';
  readonly userId: string;
  readonly email: string;
  readonly isSuperAdmin: boolean;
  /** Role in the active organization; super admins act as owners in any organization. */
  readonly role: Role | null;
  /**
   * The session speaks for the account itself, not only for organizations (session-admission.ts,
   * `speaksForAccount`): set by the session resolver; absent means no.
   */
  readonly speaksForAccount?: boolean;
}

export interface ApiKeyCaller {
  readonly kind: 'apiKey';
  readonly keyId: string;
  readonly prefix: string;
  readonly scopes: readonly ApiKeyScope[];
  /** E-mail of the user who created the key, when a user did. */
  readonly email: string | null;
  readonly userId: string | null;
  /** For a personal key (`gpat_`): its user's role in the key's organization, read on this request. */
  readonly role: Role | null;
  /** The plan of the key's organization (its key-route limits depend on it). */
  readonly serviceTier: string;
}

export type Caller = SessionCaller | ApiKeyCaller;

/** Who is calling, for which organization: resolved once by the access guard. */
export interface AuthContext {
  readonly caller: Caller;
  readonly organizationId: OrganizationId | null;
  /** The request's client address, for audit entries. */
  readonly ipAddress: string | null;
}

/** An AuthContext with an organization: what tenant-scoped services take. */
export interface OrgAuthContext extends AuthContext {
  readonly organizationId: OrganizationId;
}

declare module 'express-serve-static-core' {
  interface Request {
    auth?: AuthContext;
  }
}

export const ROLE_RANK: Record<Role, number> = { viewer: 0, member: 1, admin: 2, owner: 3 };

export function hasRole(role: Role | null, minimum: Role): boolean {
  return role !== null && ROLE_RANK[role] >= ROLE_RANK[minimum];
}

/** The caller's context, as the access guard resolved it. */
export const Auth = createParamDecorator((_data: unknown, context: ExecutionContext): AuthContext => {
  const auth = context.switchToHttp().getRequest<Request>().auth;
  if (!auth) throw new Error('Auth() used on a route without an authenticated access rule');
  return auth;
});

/** The caller's context with its organization; 403 when the session has none selected. */
export const OrgAuth = createParamDecorator((_data: unknown, context: ExecutionContext): OrgAuthContext => {
  const auth = context.switchToHttp().getRequest<Request>().auth;
  if (!auth) throw new Error('OrgAuth() used on a route without an authenticated access rule');
  if (!auth.organizationId) {
    throw forbidden('No organization is selected', {
      hint: 'Switch to an organization with POST /api/v1/auth/switch-org',
    });
  }
  return auth as OrgAuthContext;
});

export function actorOf(auth: AuthContext): { userId: string | null; email: string | null } {
  return { userId: auth.caller.userId, email: auth.caller.email };
}

/**
 * The one gate of what acts on the account itself rather than on an organization (its address,
 * its memberships elsewhere, its deletion): the session must speak for the whole account, which a
 * session made by one organization's identity provider does not while the account belongs to
 * other organizations too (decision 0068). 403 `sign_in_required` otherwise.
 */
export function assertSpeaksForAccount(caller: Caller): void {
  if (caller.kind === 'session' && caller.speaksForAccount === true) return;
  throw new AppException(
    403,
    'sign_in_required',
    "This session was signed in by one organization's identity provider: it cannot change the account itself",
    { hint: 'Sign in with your password (POST /api/v1/auth/login), then try again' },
  );
}
