import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request } from 'express';
import { ACCESS_KEY, type AccessRule } from '../common/access/access.decorator.js';
import { hasRole, type AuthContext } from '../common/access/auth-context.js';
import { forbidden, unauthorized } from '../common/errors/app-exception.js';
import { looksLikeApiKey } from '../api-keys/api-key-secret.js';
import { ApiKeysService, type AuthenticatedKey } from '../api-keys/api-keys.service.js';
import { TenantResolver, type Tenant } from '../apps/tenant-resolver.js';
import { AppException, badRequest } from '../common/errors/app-exception.js';
import { DeviceTokenVerifier, type DeviceToken } from '../attestation/device-token-verifier.js';
import { noteInvalidInputStatus } from '../common/validation/validation.js';
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
      request.auth = apiKeyContext(found, request);
      return true;
    }
    const claims = await this.deviceTokens.verify(token);
    if (!claims || claims.app_id !== tenant.appId) {
      throw unauthorized('The attestation token is invalid, expired or for another app', {
        hint: 'Refresh it with POST /api/v1/attestation/refresh',
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

  private async byApiKey(rule: AccessRule, request: Request): Promise<AuthContext | null> {
    const token = bearerToken(request);
    if (!token || !looksLikeApiKey(token)) return null;
    if (!rule.apiKey) {
      throw unauthorized('API keys are not accepted on this endpoint', { hint: 'Use a dashboard session' });
    }
    const found = await this.apiKeys.authenticate(token);
    if (!found) throw unauthorized('The API key is invalid, revoked or expired');
    const missing = rule.apiKey.filter((scope) => !found.key.scopes.includes(scope));
    if (missing.length) throw forbidden(`The API key lacks the scope ${missing.join(', ')}`);
    return apiKeyContext(found, request);
  }
}

function apiKeyContext(found: AuthenticatedKey, request: Request): AuthContext {
  return {
    caller: {
      kind: 'apiKey',
      keyId: found.key.id,
      prefix: found.key.prefix,
      scopes: found.key.scopes,
      email: found.creatorEmail,
      userId: found.key.createdBy,
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
  ].filter(Boolean);
  return `Send ${ways.join(' or ')}`;
}
