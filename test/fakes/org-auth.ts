import type { OrgAuthContext } from '../../src/common/access/auth-context.js';
import type { Role } from '../../src/common/access/access.decorator.js';
import { trustOrganizationId } from '../../src/common/access/tenant-id.js';

/** A signed-in member of `organizationId` with `role`, as the access guard would resolve it. */
export function memberAuth(organizationId: string, userId: string, role: Role = 'admin'): OrgAuthContext {
  return {
    caller: { kind: 'session', userId, email: `${userId}@example.com`, isSuperAdmin: false, role },
    organizationId: trustOrganizationId(organizationId),
    ipAddress: '203.0.113.7',
  };
}
