import type { EntityManager } from 'typeorm';
import { ssoRequired } from '../auth.exceptions.js';
import { tierDefinition } from '../../common/tiers.js';
import { membershipJoin, organizationJoin } from '../../organizations/organizations.service.js';

/**
 * Password sign-in is refused to a member of an organization that enforces SSO (while it is on a
 * plan with SSO), unless the member is that organization's Owner: the break-glass account for
 * when the identity provider is down or misconfigured. Personal API keys are not sign-ins and
 * stay valid. Called only after the password was checked, so the refusal reveals nothing to
 * someone who does not know it.
 */
export async function assertPasswordSignInAllowed(manager: EntityManager, userId: string): Promise<void> {
  const rows: { slug: string; service_tier: string }[] = await manager.query(
    `SELECT o.slug, o.tier AS service_tier
       FROM sso_connections c
       ${membershipJoin('m', '$1', 'c.organization_id')}
       ${organizationJoin('o', 'c.organization_id')}
      WHERE c.enforce AND m.role <> 'owner'
      ORDER BY m.joined_at`,
    [userId],
  );
  const enforcing = rows.find((row) => tierDefinition(row.service_tier).features.sso);
  if (!enforcing) return;
  throw ssoRequired(enforcing.slug);
}
