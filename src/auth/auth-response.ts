import { Injectable } from '@nestjs/common';
import { entitlementsOf } from '../common/tiers.js';
import { OrganizationsService } from '../organizations/organizations.service.js';
import { UsersService } from '../users/users.service.js';
import type { OrganizationId } from '../common/access/tenant-id.js';

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

/** Builds the auth response object from the account (users) and the organization and membership (organizations). */
@Injectable()
export class AuthResponses {
  constructor(
    private readonly users: UsersService,
    private readonly organizations: OrganizationsService,
  ) {}

  /**
   * `user.role` is the role in the active organization, `super_admin` for a super admin outside
   * any organization they belong to, and `none` without an organization context.
   */
  async build(userId: string, organizationId: OrganizationId | null): Promise<AuthResponse> {
    const user = await this.users.findById(userId);
    if (!user) throw new Error('the auth response of an account that does not exist');
    const found = organizationId ? await this.organizations.find(organizationId) : null;
    const organization = found
      ? { id: found.id, name: found.name, slug: found.slug, serviceTier: found.serviceTier }
      : null;
    const membership = organization ? await this.organizations.roleOf(organization.id, userId) : null;
    const role = organization
      ? (membership ?? (user.isSuperAdmin ? 'owner' : 'none'))
      : user.isSuperAdmin
        ? 'super_admin'
        : 'none';
    return {
      user: {
        id: user.id,
        email: user.email,
        role,
        organizationId: organization?.id ?? null,
        isActive: user.status === 'active' && user.emailVerifiedAt !== null,
      },
      organization,
      entitlements: organization ? entitlementsOf(organization.serviceTier) : null,
    };
  }
}
