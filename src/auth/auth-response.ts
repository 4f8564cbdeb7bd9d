import type { DataSource } from 'typeorm';
import { entitlementsOf } from '../common/tiers.js';
import { membershipJoin, organizationJoin } from '../organizations/organizations.service.js';
import { usersFrom } from '../users/users.service.js';

/** The auth response object of login, me, verify-email, switch-org and clear-org. */
export interface AuthResponse {
  user: {
    id: string;
    email: string;
    /** The role in the active organization; `super_admin` or `none` outside one. */
    role: string;
    organizationId: string | null;
    /** Active and with a verified e-mail address. */
    isActive: boolean;
  };
  /** The active organization; null without one. */
  organization: { id: string; name: string | null; slug: string | null; serviceTier: string } | null;
  entitlements: ReturnType<typeof entitlementsOf> | null;
}

/**
 * The auth response object of login, me, verify-email, switch-org and clear-org.
 * `user.role` is the role in the active organization, `super_admin` for a super admin outside
 * any organization they belong to, and `none` without an organization context.
 */
export async function buildAuthResponse(
  dataSource: DataSource,
  userId: string,
  organizationId: string | null,
): Promise<AuthResponse> {
  const rows: {
    id: string;
    email: string;
    status: string;
    email_verified_at: Date | null;
    is_super_admin: boolean;
    role: string | null;
    org_id: string | null;
    org_name: string | null;
    org_slug: string | null;
    org_tier: string | null;
  }[] = await dataSource.query(
    `SELECT u.id, u.email, u.status, u.email_verified_at, u.is_super_admin, m.role,
            o.id AS org_id, o.name AS org_name, o.slug AS org_slug, o.tier AS org_tier
       FROM ${usersFrom('u')}
       ${organizationJoin('o', '$2', { left: true })}
       ${membershipJoin('m', 'u.id', 'o.id', { left: true })}
      WHERE u.id = $1`,
    [userId, organizationId],
  );
  const row = rows[0];
  const organization =
    row?.org_id && row.org_tier
      ? { id: row.org_id, name: row.org_name, slug: row.org_slug, serviceTier: row.org_tier }
      : null;
  const role = organization
    ? (row.role ?? (row.is_super_admin ? 'owner' : 'none'))
    : row.is_super_admin
      ? 'super_admin'
      : 'none';
  return {
    user: {
      id: row.id,
      email: row.email,
      role,
      organizationId: organization?.id ?? null,
      isActive: row.status === 'active' && row.email_verified_at !== null,
    },
    organization,
    entitlements: organization ? entitlementsOf(organization.serviceTier) : null,
  };
}
