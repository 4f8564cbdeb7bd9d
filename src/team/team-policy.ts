import { hasRole, type OrgAuthContext } from '../common/access/auth-context.js';
import { forbidden } from '../common/errors/app-exception.js';
import { PLAN_RULES, planAllows } from '../common/tiers.js';
import type { OrganizationRecord } from '../organizations/organizations.repository.js';
import type { OrganizationsService } from '../organizations/organizations.service.js';

/**
 * Locks the caller's organization row for the rest of the unit of work: every team write takes
 * this lock first, so seat counts, owner counts and invite states are decided one at a time.
 * A key's `admin:team` scope only works while the plan allows it (`PLAN_RULES.adminTeamScope`: the
 * scope can outlive a downgrade), which is checked here too.
 */
export async function lockOrganizationForTeamWrite(
  organizations: Pick<OrganizationsService, 'get'>,
  auth: OrgAuthContext,
): Promise<OrganizationRecord> {
  const organization = await organizations.get(auth.organizationId, { lock: true });
  if (auth.caller.kind === 'apiKey' && !planAllows(organization.serviceTier, 'adminTeamScope')) {
    throw forbidden(PLAN_RULES.adminTeamScope.refusal, {
      hint: 'Upgrade to Enterprise, or manage the team from the dashboard',
    });
  }
  return organization;
}

/** Only an Owner grants, changes or takes away the Owner role; API keys never do. */
export function assertMayManageOwners(auth: OrgAuthContext): void {
  if (auth.caller.kind !== 'session' || !hasRole(auth.caller.role, 'owner')) {
    throw forbidden('Only an Owner can grant or change the Owner role');
  }
}
