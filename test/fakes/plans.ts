import { tierDefinition, type TierDefinition, type TierFeature } from '../../src/common/tiers.js';
import { assertFeature, type PlanService } from '../../src/organizations/plan.service.js';

/** Each organization's plan, as PlanService answers it (free unless set). */
export class FixedPlans implements Pick<PlanService, 'planOf' | 'requireFeature'> {
  private readonly plans = new Map<string, string>();

  set(organizationId: string, plan: string): this {
    this.plans.set(organizationId, plan);
    return this;
  }

  planOf(organizationId: string): Promise<TierDefinition> {
    return Promise.resolve(tierDefinition(this.plans.get(organizationId) ?? 'free'));
  }

  async requireFeature(
    organizationId: string,
    feature: TierFeature,
    refusal: { message: string; hint?: string },
  ): Promise<TierDefinition> {
    const plan = await this.planOf(organizationId);
    assertFeature(plan, feature, refusal.message, refusal.hint);
    return plan;
  }

  asPlanService(): PlanService {
    return this as unknown as PlanService;
  }
}
