import type { SsoConnection } from './sso-connections.service.js';

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
