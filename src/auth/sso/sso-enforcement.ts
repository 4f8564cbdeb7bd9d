import type { EntityManager } from 'typeorm';
import { ssoRequired } from '../auth.exceptions.js';
import { tierDefinition } from '../../common/tiers.js';

/**
 * Password sign-in is refused to a member of an organization that enforces SSO (while it is on a
 * plan with SSO), unless the member is that organization's Owner: the break-glass account for
 * when the identity provider is down or misconfigured. Personal API keys are not sign-ins and
 * stay valid. Called only after the password was checked, so the refusal reveals nothing to
 * someone who does not know it.
 */
export async function assertPasswordSignInAllowed(manager: EntityManager, userId: string): Promise<void> {
  const rows: { slug: string; service_tier: string }[] = await manager.query(
    `SELECT o.slug, o.service_tier
       FROM memberships m
       JOIN sso_connections c ON c.organization_id = m.organization_id AND c.enforce
       JOIN organizations o ON o.id = m.organization_id
      WHERE m.user_id = $1 AND m.role <> 'owner'
      ORDER BY m.created_at`,
    [userId],
  );
  const enforcing = rows.find((row) => tierDefinition(row.service_tier).features.sso);
  if (!enforcing) return;
  throw ssoRequired(enforcing.slug);
}
