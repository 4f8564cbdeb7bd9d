import type { SsoConnection } from './sso-connections.service.js';
import type { SsoDomain } from './sso-domains.service.js';

/** `GET` and `PUT /api/v1/org/sso`: the connection as an Admin sees it; the client secret is never returned. */
export function toSsoConnectionResponse(connection: SsoConnection, redirectUri: string) {
  return {
    issuer: connection.issuer,
    clientId: connection.clientId,
    clientSecretSet: true,
    allowedDomains: connection.allowedDomains,
    defaultRole: connection.defaultRole,
    enforce: connection.enforce,
    redirectUri,
    createdAt: connection.createdAt.toISOString(),
    updatedAt: connection.updatedAt.toISOString(),
  };
}

/** One SSO domain as `GET /api/v1/org/sso/domains` lists it: its state and the record that proves it. */
export function toSsoDomainResponse(domain: SsoDomain) {
  return {
    domain: domain.domain,
    status: domain.verifiedAt ? ('verified' as const) : ('pending' as const),
    verifiedAt: domain.verifiedAt?.toISOString() ?? null,
    lastCheckedAt: domain.checkedAt?.toISOString() ?? null,
    lastCheckError: domain.checkError,
    txtRecord: { name: domain.record.name, value: domain.record.value },
  };
}
