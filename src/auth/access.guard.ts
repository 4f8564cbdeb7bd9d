import { CanActivate, ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request, Response } from 'express';
import type { PassportStatic } from 'passport';
import { ACCESS_KEY, SDK_KEY_SCOPE, type AccessRule, type Role } from '../common/access/access.decorator.js';
import { hasRole, type AuthContext } from '../common/access/auth-context.js';
import { badRequest, forbidden, unauthorized } from '../common/errors/app-exception.js';
import { appInactive, organizationInactive, sdkAndroidAppNotFound, sdkAppNotFound } from './auth.exceptions.js';
import type { AuthenticatedKey } from '../api-keys/api-keys.service.js';
import {
  IDENTITY_HEADER_LIMITS,
  iosIdentityFits,
  packageNameFits,
  TenantResolver,
  type Tenant,
} from '../apps/tenant-resolver.js';
import type { DeviceToken } from '../device-tokens/device-token-verifier.js';
import { invalidInputStatusOf } from '../common/validation/validation.js';
import { STRATEGY, type Principal } from './strategies/principal.js';
import { trustOrganizationId } from '../common/access/tenant-id.js';

declare module 'express-serve-static-core' {
  interface Request {
    tenant?: Tenant;
    /** The device's verified attestation token on routes that take one. */
    deviceToken?: DeviceToken;
  }
}

/** The application's own Passport instance, holding its strategies (AccessModule). */
export const PASSPORT = Symbol('PASSPORT');

/**
 * Enforces each route's `@Access` declaration: it picks the strategies the declaration admits
 * (cookie session, API key, device token: passport strategies through `@nestjs/passport`), lets
 * passport authenticate the caller, then decides
 * whether that caller may use the route (role, scopes, the tenant's app) and sets, once,
 * `request.auth` (who is calling for which organization) or `request.deviceToken`. A route
 * without a declaration is refused.
 */
type Middleware = (request: Request, response: Response, next: (error?: Error) => void) => void;

interface RouteDeclaration {
  readonly rule: AccessRule | undefined;
  readonly invalidInputStatus: 400 | undefined;
}

const SESSION_OR_KEY = [STRATEGY.cookieSession, STRATEGY.apiKey];
const KEY_ONLY = [STRATEGY.apiKey];
const DEVICE_TOKEN_OR_KEY = [STRATEGY.deviceToken, STRATEGY.apiKey];
/** Routes that read a device token when one is sent (`deviceTokenIfSent`): an API key there is not a credential. */
const DEVICE_TOKEN_ONLY = [STRATEGY.deviceToken];

@Injectable()
export class AccessGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly tenants: TenantResolver,
    @Inject(PASSPORT) private readonly passport: PassportStatic,
  ) {}

  /**
   * Each route's declarations, read from the reflector once, by class and handler: a handler
   * inherited by two controllers carries each one's class declarations.
   */
  private readonly declarations = new WeakMap<object, WeakMap<object, RouteDeclaration>>();

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const { rule, invalidInputStatus } = this.declarationOf(context);
    if (!rule) throw forbidden('This route declares no access rule');
    const request = context.switchToHttp().getRequest<Request>();
    if (invalidInputStatus) request.invalidInputStatus = invalidInputStatus;
    if (rule.public) return true;
    if (rule.tenant) {
      request.tenant = await this.resolveTenant(request);
      if (!rule.session && !rule.apiKey && !rule.deviceToken) {
        if (rule.deviceTokenIfSent) {
          const sent = await this.principal(context, rule, DEVICE_TOKEN_ONLY);
          if (sent?.kind === 'deviceToken') request.deviceToken = sent.claims;
        }
        return true;
      }
      if (rule.deviceToken) return this.admitDevice(request, request.tenant, await this.principal(context, rule));
    }
    const principal = await this.principal(context, rule);
    if (!principal) throw unauthorized('Authentication required', { hint: describeAccepted(rule) });
    request.auth = this.admit(rule, request, principal);
    return true;
  }

  private declarationOf(context: ExecutionContext): RouteDeclaration {
    const handler = context.getHandler();
    const classRef = context.getClass();
    let ofClass = this.declarations.get(classRef);
    if (!ofClass) this.declarations.set(classRef, (ofClass = new WeakMap()));
    let declaration = ofClass.get(handler);
    if (!declaration) {
      declaration = {
        rule: this.reflector.getAllAndOverride<AccessRule | undefined>(ACCESS_KEY, [handler, classRef]),
        invalidInputStatus: invalidInputStatusOf(this.reflector, context),
      };
      ofClass.set(handler, declaration);
    }
    return declaration;
  }

  /**
   * Runs the strategies the rule admits, in order, through passport: the first that recognises
   * its credential wins, one that finds none passes to the next, and one that finds a bad
   * credential refuses with its own answer. Null when no strategy recognised a credential.
   */
  private principal(
    context: ExecutionContext,
    rule: AccessRule,
    strategies: string[] = rule.deviceToken ? DEVICE_TOKEN_OR_KEY : rule.session ? SESSION_OR_KEY : KEY_ONLY,
  ): Promise<Principal | null> {
    const http = context.switchToHttp();
    return new Promise((resolve, reject) => {
      const done = (error: Error | null | undefined, principal?: Principal | false) =>
        error ? reject(error) : resolve(principal || null);
      const middleware = this.passport.authenticate(strategies, { session: false }, done) as Middleware;
      middleware(http.getRequest<Request>(), http.getResponse<Response>(), (error?: Error) => done(error));
    });
  }

  /**
   * SDK routes such as flags: the identity headers alone are not enough; the device also shows
   * its attestation token for that app, or a server shows an API key of the app's organization.
   */
  private admitDevice(request: Request, tenant: Tenant, principal: Principal | null): boolean {
    if (!principal) {
      throw unauthorized('An attestation token or an API key is required', {
        hint: 'Send Authorization: Bearer <token from /api/v1/attestation/validate>',
      });
    }
    if (principal.kind === 'deviceToken') {
      request.deviceToken = principal.claims;
      return true;
    }
    if (principal.kind !== 'apiKey' || principal.found.key.organizationId !== tenant.organizationId) {
      throw unauthorized('The API key is invalid, revoked, expired or of another organization');
    }
    if (!principal.found.key.scopes.includes(SDK_KEY_SCOPE)) {
      throw forbidden(`The API key lacks the scope ${SDK_KEY_SCOPE}`);
    }
    request.auth = apiKeyContext(principal.found, request, principal.role);
    return true;
  }

  /** Whether the authenticated caller may use a dashboard or server route. */
  private admit(rule: AccessRule, request: Request, principal: Principal): AuthContext {
    if (principal.kind === 'session') {
      const resolved = principal.session;
      if (rule.session !== 'user') {
        if (!resolved.organizationId) {
          throw forbidden('No organization is selected', {
            hint: 'Switch to an organization with POST /api/v1/auth/switch-org',
          });
        }
        if (!hasRole(resolved.caller.role, rule.session!)) {
          throw forbidden(`This action needs the ${rule.session} role or higher`);
        }
      }
      return {
        caller: resolved.caller,
        organizationId: resolved.organizationId,
        ipAddress: request.ip ?? null,
      };
    }
    if (principal.kind !== 'apiKey') throw unauthorized('Authentication required', { hint: describeAccepted(rule) });
    return this.admitKey(rule, request, principal.found, principal.role);
  }

  /**
   * The key model (docs/security.md): organization keys (`aat_`, `service_`) hold exactly their
   * scopes; a personal key (`gpat_`) acts as its user, so it needs its scopes and, on every
   * request, the user's current role in the key's organization to meet the route's role.
   */
  private admitKey(rule: AccessRule, request: Request, found: AuthenticatedKey, role: Role | null): AuthContext {
    if (!rule.apiKey && !rule.personalKey) {
      throw unauthorized('API keys are not accepted on this endpoint', { hint: 'Use a dashboard session' });
    }
    const personal = found.key.keyType === 'gpat';
    const required = rule.apiKey ?? (personal ? rule.personalKey : undefined);
    if (!required) {
      throw unauthorized('Only personal API keys (gpat_) and dashboard sessions are accepted on this endpoint', {
        hint: 'Sign in with the CLI (attestly login) or use a dashboard session',
      });
    }
    const missing = required.filter((scope) => !found.key.scopes.includes(scope));
    if (missing.length) throw forbidden(`The API key lacks the scope ${missing.join(', ')}`);
    if (personal && rule.session && rule.session !== 'user' && !hasRole(role, rule.session)) {
      throw forbidden(`This action needs the ${rule.session} role or higher`, {
        hint: "A personal key acts with its user's current role",
      });
    }
    return apiKeyContext(found, request, role);
  }

  /** The app an SDK's identity headers name; it must exist and be active with its organization. */
  private async resolveTenant(request: Request): Promise<Tenant> {
    const bundleId = request.headers['x-bundle-id'];
    const teamId = request.headers['x-team-id'];
    const packageName = request.headers['x-package-name'];
    const android = bundleId === undefined && teamId === undefined && typeof packageName === 'string';
    if (android && (!packageName || !packageNameFits(packageName))) {
      throw badRequest(
        `The X-Package-Name header must be an Android package name of at most ${IDENTITY_HEADER_LIMITS.packageName} characters`,
        {
          hint: "Send the app's Android application id",
        },
      );
    }
    if (!android && (typeof bundleId !== 'string' || !bundleId || typeof teamId !== 'string' || !teamId)) {
      throw badRequest('The X-Bundle-ID and X-Team-ID headers are required', {
        hint: "Send the app's Bundle ID and developer Team ID (iOS), or X-Package-Name alone (Android)",
      });
    }
    // Longer identities name no app (apps are created with at most these): refused before any lookup.
    if (!android && !iosIdentityFits(bundleId as string, teamId as string)) {
      const { bundleId: bundleMax, teamId: teamMax } = IDENTITY_HEADER_LIMITS;
      throw badRequest(
        `The X-Bundle-ID header must be at most ${bundleMax} characters and X-Team-ID at most ${teamMax}`,
        {
          hint: "Send the app's Bundle ID and developer Team ID",
        },
      );
    }
    const tenant = android
      ? await this.tenants.resolveAndroid(packageName)
      : await this.tenants.resolve(bundleId as string, teamId as string);
    if (!tenant) {
      throw android ? sdkAndroidAppNotFound() : sdkAppNotFound();
    }
    if (!tenant.organizationActive) throw organizationInactive();
    if (!tenant.appActive) throw appInactive();
    return tenant;
  }
}

function apiKeyContext(found: AuthenticatedKey, request: Request, role: Role | null): AuthContext {
  return {
    caller: {
      kind: 'apiKey',
      keyId: found.key.id,
      prefix: found.key.prefix,
      scopes: found.key.scopes,
      email: found.creatorEmail,
      userId: found.key.createdBy,
      role,
      serviceTier: found.serviceTier,
    },
    organizationId: trustOrganizationId(found.key.organizationId),
    ipAddress: request.ip ?? null,
  };
}

function describeAccepted(rule: AccessRule): string {
  const ways = [
    rule.session ? 'a dashboard session' : null,
    rule.apiKey ? `an API key${rule.apiKey.length ? ` with ${rule.apiKey.join(', ')}` : ''}` : null,
    !rule.apiKey && rule.personalKey ? `a personal API key (gpat_) with ${rule.personalKey.join(', ')}` : null,
  ].filter(Boolean);
  return `Send ${ways.join(' or ')}`;
}
