import type { EntityManager } from 'typeorm';
import type { Role } from '../../common/access/access.decorator.js';
import { ssoRequired } from '../auth.exceptions.js';
import { tierDefinition } from '../../common/tiers.js';
import { membershipJoin, organizationJoin } from '../../organizations/organizations.service.js';

/**
 * Whether an organization enforces SSO on one of its members: its connection enforces, its plan
 * has SSO, and the member is not an Owner (the break-glass account for when the identity provider
 * is down or misconfigured). Personal API keys are not sign-ins and are not concerned.
 */
export function ssoEnforcedOn(enforce: boolean | null, serviceTier: string, role: Role | null): boolean {
  return enforce === true && tierDefinition(serviceTier).features.sso && role !== 'owner';
}

/** The user's organizations that enforce SSO on them, by id, with their slugs (join order). */
export async function ssoEnforcingOrganizations(manager: EntityManager, userId: string): Promise<Map<string, string>> {
  const rows: { organization_id: string; slug: string; service_tier: string; role: Role }[] = await manager.query(
    `SELECT c.organization_id, o.slug, o.tier AS service_tier, m.role
       FROM sso_connections c
       ${membershipJoin('m', '$1', 'c.organization_id')}
       ${organizationJoin('o', 'c.organization_id')}
      WHERE c.enforce
      ORDER BY m.joined_at`,
    [userId],
  );
  return new Map(
    rows
      .filter((row) => ssoEnforcedOn(true, row.service_tier, row.role))
      .map((row) => [row.organization_id, row.slug] as const),
  );
}

/** The organization's connection as the sign-in rules see it: none, or whether it enforces (plan included). */
export async function ssoConnectionState(
  manager: EntityManager,
  organizationId: string,
): Promise<{ connected: boolean; enforce: boolean; serviceTier: string } | null> {
  const rows: { enforce: boolean; service_tier: string }[] = await manager.query(
    `SELECT c.enforce, o.tier AS service_tier FROM sso_connections c ${organizationJoin('o', 'c.organization_id')}
      WHERE c.organization_id = $1`,
    [organizationId],
  );
  const row = rows[0];
  if (!row || !tierDefinition(row.service_tier).features.sso) return null;
  return { connected: true, enforce: row.enforce, serviceTier: row.service_tier };
}

/**
 * Password sign-in is refused (403 `sso_required`) only when the user has organizations and every
 * one of them enforces SSO on them: the password opens nothing then. Otherwise it signs in, and the
 * session stays out of the enforcing organizations only (session-admission.ts). Called only after
 * the password was checked, so the refusal reveals nothing to someone who does not know it.
 */
export async function assertPasswordSignInAllowed(
  manager: EntityManager,
  userId: string,
  memberOf: readonly string[],
): Promise<void> {
  if (!memberOf.length) return;
  const enforcing = await ssoEnforcingOrganizations(manager, userId);
  if (memberOf.some((organizationId) => !enforcing.has(organizationId))) return;
  throw ssoRequired(enforcing.values().next().value!);
}
