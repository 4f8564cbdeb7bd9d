import { Injectable } from '@nestjs/common';
import type { OrganizationId } from '../common/access/tenant-id.js';
import { tierDefinition, type TierDefinition, type TierFeature } from '../common/tiers.js';
import { featureUnavailable } from './organizations.exceptions.js';
import { OrganizationsService, type OrganizationQuery } from './organizations.service.js';

/** Refuses with `featureUnavailable` unless `plan` has `feature`; for callers that already hold the plan. */
export function assertFeature(plan: TierDefinition, feature: TierFeature, message: string, hint?: string): void {
  if (!plan.features[feature]) throw featureUnavailable(message, hint);
}

/**
 * Answers "may this organization use X": the organization's plan (its row of the tier table in
 * `common/tiers.ts`) and the gate that refuses a feature the plan lacks. With `lock`, the
 * organization row stays locked until the caller's transaction ends, so writes that count against
 * a plan limit are decided one at a time.
 */
@Injectable()
export class PlanService {
  constructor(private readonly organizations: OrganizationsService) {}

  /** The plan in force; 404 for an organization that does not exist. */
  async planOf(organizationId: OrganizationId, options: OrganizationQuery = {}): Promise<TierDefinition> {
    return tierDefinition((await this.organizations.get(organizationId, options)).serviceTier);
  }

  /** The plan, or 403 `feature_unavailable` (with `message` and `hint`) when it lacks `feature`. */
  async requireFeature(
    organizationId: OrganizationId,
    feature: TierFeature,
    refusal: { message: string; hint?: string },
    options: OrganizationQuery = {},
  ): Promise<TierDefinition> {
    const plan = await this.planOf(organizationId, options);
    assertFeature(plan, feature, refusal.message, refusal.hint);
    return plan;
  }
}
