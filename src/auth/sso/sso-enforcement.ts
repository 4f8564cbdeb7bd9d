import type { OrganizationId } from '../../common/access/tenant-id.js';
import { Injectable } from '@nestjs/common';
import type { Role } from '../../common/access/access.decorator.js';
import { tierDefinition } from '../../common/tiers.js';
import { OrganizationsService } from '../../organizations/organizations.service.js';
import { ssoRequired } from '../auth.exceptions.js';
import { SsoConnectionsRepository } from './sso-connections.repository.js';

/**
 * Whether an organization enforces SSO on one of its members: its connection enforces, its plan
 * has SSO, and the member is not an Owner (the break-glass account for when the identity provider
 * is down or misconfigured). Personal API keys are not sign-ins and are not concerned.
 */
export function ssoEnforcedOn(enforce: boolean | null, serviceTier: string, role: Role | null): boolean {
  return enforce === true && tierDefinition(serviceTier).features.sso && role !== 'owner';
}

/** What the sign-in rules read of SSO enforcement: the connections (this feature's) and the memberships (organizations'). */
@Injectable()
export class SsoEnforcement {
  constructor(
    private readonly connections: SsoConnectionsRepository,
    private readonly organizations: OrganizationsService,
  ) {}

  /** The user's organizations that enforce SSO on them, by id, with their slugs (join order). */
  async enforcingOrganizations(userId: string): Promise<Map<string, string>> {
    const memberOf = await this.organizations.listFor(userId);
    const enforcing = await this.connections.enforcingAmong(memberOf.map((organization) => organization.id));
    const result = new Map<string, string>();
    for (const organization of memberOf) {
      if (!enforcing.has(organization.id) || !tierDefinition(organization.serviceTier).features.sso) continue;
      const role = await this.organizations.roleOf(organization.id, userId);
      if (ssoEnforcedOn(true, organization.serviceTier, role)) result.set(organization.id, organization.slug);
    }
    return result;
  }

  /** The organization's connection as the sign-in rules see it: none (or a plan without SSO), or whether it enforces. */
  async connectionState(organization: {
    id: OrganizationId;
    serviceTier: string;
  }): Promise<{ connected: boolean; enforce: boolean; serviceTier: string } | null> {
    if (!tierDefinition(organization.serviceTier).features.sso) return null;
    const enforce = await this.connections.enforces(organization.id);
    if (enforce === null) return null;
    return { connected: true, enforce, serviceTier: organization.serviceTier };
  }

  /**
   * Password sign-in is refused (403 `sso_required`) only when the user has organizations and
   * every one of them enforces SSO on them: the password opens nothing then. Otherwise it signs
   * in, and the session stays out of the enforcing organizations only (session-admission.ts).
   * Called only after the password was checked, so the refusal reveals nothing to someone who
   * does not know it.
   */
  async assertPasswordSignInAllowed(userId: string, memberOf: readonly string[]): Promise<void> {
    if (!memberOf.length) return;
    const enforcing = await this.enforcingOrganizations(userId);
    if (memberOf.some((organizationId) => !enforcing.has(organizationId))) return;
    throw ssoRequired(enforcing.values().next().value!);
  }
}
