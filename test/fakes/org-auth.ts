import type { OrgAuthContext } from '../../src/common/access/auth-context.js';
import type { ApiKeyScope, Role } from '../../src/common/access/access.decorator.js';
import { trustOrganizationId } from '../../src/common/access/tenant-id.js';

/** A signed-in member of `organizationId` with `role`, as the access guard would resolve it. */
export function memberAuth(organizationId: string, userId: string, role: Role = 'admin'): OrgAuthContext {
  return {
    caller: { kind: 'session', userId, email: `${userId}@example.com`, isSuperAdmin: false, role },
    organizationId: trustOrganizationId(organizationId),
    ipAddress: '203.0.113.7',
  };
}

/** A tenant's backend calling with an API key of `organizationId` holding `scopes`. */
export function apiKeyAuth(organizationId: string, scopes: ApiKeyScope[] = ['tokens:verify']): OrgAuthContext {
  return {
    caller: {
      kind: 'apiKey',
      keyId: `key-of-${organizationId}`,
      prefix: 'service_abc',
      scopes,
      email: null,
      userId: null,
      role: null,
      serviceTier: 'professional',
    },
    organizationId: trustOrganizationId(organizationId),
    ipAddress: '203.0.113.9',
  };
}
