import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request } from 'express';
import { ACCESS_KEY, SDK_KEY_SCOPE, type AccessRule, type Role } from '../common/access/access.decorator.js';
import { hasRole, type AuthContext } from '../common/access/auth-context.js';
import { forbidden, unauthorized } from '../common/errors/app-exception.js';
import { looksLikeApiKey } from '../api-keys/api-key-secret.js';
import { ApiKeysService, type AuthenticatedKey } from '../api-keys/api-keys.service.js';
import { TenantResolver, type Tenant } from '../apps/tenant-resolver.js';
import { AppException, badRequest } from '../common/errors/app-exception.js';
import { DeviceTokenVerifier, type DeviceToken } from '../attestation/device-token-verifier.js';
import { noteInvalidInputStatus } from '../common/validation/validation.js';
import { BlockedDevices } from '../devices/blocked-devices.js';
import { SessionResolver } from './session-resolver.js';

declare module 'express-serve-static-core' {
  interface Request {
    tenant?: Tenant;
    /** The device's verified attestation token on routes that take one. */
    deviceToken?: DeviceToken;
  }
}

/**
 * Enforces each route's access declaration and resolves, once, who is calling for which
 * organization (`request.auth`). A route without a declaration is refused.
 */
@Injectable()
export class AccessGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly sessions: SessionResolver,
    private readonly apiKeys: ApiKeysService,
    private readonly tenants: TenantResolver,
    private readonly deviceTokens: DeviceTokenVerifier,
    private readonly blockedDevices: BlockedDevices,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const rule = this.reflector.getAllAndOverride<AccessRule | undefined>(ACCESS_KEY, [
      context.getHandler(),
      context.getClass(),
    ]);
    if (!rule) throw forbidden('This route declares no access rule');
    const request = context.switchToHttp().getRequest<Request>();
    noteInvalidInputStatus(this.reflector, context, request);
    if (rule.public) return true;
    if (rule.tenant) {
      request.tenant = await this.resolveTenant(request);
      if (!rule.session && !rule.apiKey && !rule.deviceToken) return true;
      if (rule.deviceToken) return this.byDeviceTokenOrKey(request, request.tenant);
    }
    const auth = (await this.bySession(rule, request)) ?? (await this.byApiKey(rule, request));
    if (!auth) throw unauthorized('Authentication required', { hint: describeAccepted(rule) });
    request.auth = auth;
    return true;
  }

  /**
   * SDK routes such as flags: the identity headers alone are not enough; the device also shows
   * its attestation token for that app, or a server shows an API key of the app's organization.
   */
  private async byDeviceTokenOrKey(request: Request, tenant: Tenant): Promise<boolean> {
    const token = bearerToken(request);
    if (!token) {
      throw unauthorized('An attestation token or an API key is required', {
        hint: 'Send Authorization: Bearer <token from /api/v1/attestation/validate>',
      });
    }
    if (looksLikeApiKey(token)) {
      const found = await this.apiKeys.authenticate(token);
      if (!found || found.key.organizationId !== tenant.organizationId) {
        throw unauthorized('The API key is invalid, revoked, expired or of another organization');
      }
      if (!found.key.scopes.includes(SDK_KEY_SCOPE)) {
        throw forbidden(`The API key lacks the scope ${SDK_KEY_SCOPE}`);
      }
      const role = await this.personalRoleOrRefuse(found);
      request.auth = apiKeyContext(found, request, role);
      return true;
    }
    const claims = await this.deviceTokens.verify(token);
    if (!claims || claims.app_id !== tenant.appId) {
      throw unauthorized('The attestation token is invalid, expired or for another app', {
        hint: 'Refresh it with POST /api/v1/attestation/refresh',
      });
    }
    if (await this.blockedDevices.isBlocked(claims.app_id, claims.sub)) {
      throw unauthorized('The attestation token belongs to a blocked device', {
        hint: 'An Admin of the app unblocks devices in the dashboard',
      });
    }
    request.deviceToken = claims;
    return true;
  }

  /** The app an SDK's identity headers name; it must exist and be active with its organization. */
  private async resolveTenant(request: Request): Promise<Tenant> {
    const bundleId = request.headers['x-bundle-id'];
    const teamId = request.headers['x-team-id'];
    if (typeof bundleId !== 'string' || !bundleId || typeof teamId !== 'string' || !teamId) {
      throw badRequest('The X-Bundle-ID and X-Team-ID headers are required', {
        hint: "Send the app's Bundle ID and developer Team ID",
      });
    }
    const tenant = await this.tenants.resolve(bundleId, teamId);
    if (!tenant) {
      throw new AppException(404, 'app_not_found', 'No app is registered with this Bundle ID and Team ID', {
        hint: 'Register the app in the dashboard; both values must match exactly',
      });
    }
    if (!tenant.organizationActive)
      throw new AppException(403, 'organization_inactive', 'The organization is not active');
    if (!tenant.appActive)
      throw new AppException(403, 'app_inactive', 'The app is deactivated', { hint: 'Activate it in the dashboard' });
    return tenant;
  }

  private async bySession(rule: AccessRule, request: Request): Promise<AuthContext | null> {
    if (!rule.session) return null;
    const resolved = await this.sessions.resolve(request);
    if (!resolved) return null;
    if (rule.session !== 'user') {
      if (!resolved.organizationId) {
        throw forbidden('No organization is selected', {
          hint: 'Switch to an organization with POST /api/v1/auth/switch-org',
        });
      }
      if (!hasRole(resolved.caller.role, rule.session)) {
        throw forbidden(`This action needs the ${rule.session} role or higher`);
      }
    }
    return { caller: resolved.caller, organizationId: resolved.organizationId, ipAddress: request.ip ?? null };
  }

  /**
   * The key model (docs/security.md): organization keys (`aat_`, `service_`) hold exactly their
   * scopes; a personal key (`gpat_`) acts as its user, so it needs its scopes and, on every
   * request, the user's current role in the key's organization to meet the route's role.
   */
  private async byApiKey(rule: AccessRule, request: Request): Promise<AuthContext | null> {
    const token = bearerToken(request);
    if (!token || !looksLikeApiKey(token)) return null;
    if (!rule.apiKey && !rule.personalKey) {
      throw unauthorized('API keys are not accepted on this endpoint', { hint: 'Use a dashboard session' });
    }
    const found = await this.apiKeys.authenticate(token);
    if (!found) throw unauthorized('The API key is invalid, revoked or expired');
    const personal = found.key.keyType === 'gpat';
    const required = rule.apiKey ?? (personal ? rule.personalKey : undefined);
    if (!required) {
      throw unauthorized('Only personal API keys (gpat_) and dashboard sessions are accepted on this endpoint', {
        hint: 'Sign in with the CLI (attestly login) or use a dashboard session',
      });
    }
    const missing = required.filter((scope) => !found.key.scopes.includes(scope));
    if (missing.length) throw forbidden(`The API key lacks the scope ${missing.join(', ')}`);
    const role = await this.personalRoleOrRefuse(found);
    if (personal && rule.session && rule.session !== 'user' && !hasRole(role, rule.session)) {
      throw forbidden(`This action needs the ${rule.session} role or higher`, {
        hint: "A personal key acts with its user's current role",
      });
    }
    return apiKeyContext(found, request, role);
  }

  /** A personal key's user must still be an active member of the key's organization. */
  private async personalRoleOrRefuse(found: AuthenticatedKey): Promise<Role | null> {
    if (found.key.keyType !== 'gpat') return null;
    const role = await this.apiKeys.personalRole(found.key);
    if (!role) {
      throw unauthorized("The API key's user is no longer an active member of its organization", {
        hint: 'Sign in again with attestly login',
      });
    }
    return role;
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
    },
    organizationId: found.key.organizationId,
    ipAddress: request.ip ?? null,
  };
}

/** The credential of `Authorization: Bearer …`, or of `X-API-Key` (server-to-server analytics). */
export function bearerToken(request: Request): string | null {
  const apiKeyHeader = request.headers['x-api-key'];
  if (typeof apiKeyHeader === 'string' && apiKeyHeader) return apiKeyHeader;
  const header = request.headers.authorization;
  if (!header) return null;
  const match = /^Bearer\s+(\S+)$/i.exec(header);
  return match ? match[1] : null;
}

function describeAccepted(rule: AccessRule): string {
  const ways = [
    rule.session ? 'a dashboard session' : null,
    rule.apiKey ? `an API key${rule.apiKey.length ? ` with ${rule.apiKey.join(', ')}` : ''}` : null,
    !rule.apiKey && rule.personalKey ? `a personal API key (gpat_) with ${rule.personalKey.join(', ')}` : null,
  ].filter(Boolean);
  return `Send ${ways.join(' or ')}`;
}
