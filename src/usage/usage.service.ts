import { Injectable } from '@nestjs/common';
import type { OrganizationId } from '../common/access/tenant-id.js';
import { nextTier, tierDefinition } from '../common/tiers.js';
import { billingPeriod, periodKey } from './billing-period.js';
import { MadRepository } from './mad.repository.js';
import { UsageCache } from './usage-cache.js';
import { OrganizationsService } from '../organizations/organizations.service.js';

export interface CanonicalUsage {
  currentMAD: number;
  tierLimit: number | null;
  tierName: string;
  billingPeriodStart: string;
  billingPeriodEnd: string;
  usagePercent: number | null;
  daysUntilReset: number | null;
  resetDate: string | null;
}

const DAY_MS = 86_400_000;

/**
 * Monthly active devices against the plan. Reads one counter row (the attestation path keeps it),
 * so it answers in milliseconds at any device count; answers are cached five minutes and may lag.
 */
@Injectable()
export class UsageService {
  constructor(
    private readonly counters: MadRepository,
    private readonly cache: UsageCache,
    private readonly organizations: OrganizationsService,
  ) {}

  canonical(organizationId: OrganizationId): Promise<CanonicalUsage> {
    return this.cache.getOrCompute(`canonical:${organizationId}`, () => this.compute(organizationId));
  }

  /** The pre-MAD names: `attestationsUsed` is MAD. */
  async legacy(organizationId: OrganizationId) {
    const [usage, tier] = await Promise.all([this.canonical(organizationId), this.tierOf(organizationId)]);
    const next = nextTier(tier);
    return {
      attestationsUsed: usage.currentMAD,
      attestationsLimit: usage.tierLimit,
      usagePercent: usage.usagePercent,
      tier: usage.tierName,
      nextTier: next?.usageName ?? null,
      nextTierLimit: next?.limits.maxMAD ?? null,
      nextTierPrice: next?.price ?? null,
      cycleEndsAt: usage.billingPeriodEnd,
    };
  }

  private async compute(organizationId: OrganizationId): Promise<CanonicalUsage> {
    const {
      serviceTier: tier,
      currentPeriodEnd: periodEnd,
      billingAnchorDay,
    } = await this.organizations.get(organizationId);
    const now = new Date(this.cache.now());
    const period = billingPeriod(now, tier, periodEnd, billingAnchorDay);
    const current = await this.counters.activeDevices(organizationId, periodKey(period.start));
    const definition = tierDefinition(tier);
    const limit = definition.limits.maxMAD;
    const unlimited = limit === null;
    return {
      currentMAD: current,
      tierLimit: limit,
      tierName: definition.usageName,
      billingPeriodStart: period.start.toISOString(),
      billingPeriodEnd: period.end.toISOString(),
      usagePercent: unlimited ? null : Math.round((current / limit) * 1000) / 10,
      daysUntilReset: unlimited ? null : Math.max(0, Math.ceil((period.end.getTime() - now.getTime()) / DAY_MS)),
      resetDate: unlimited ? null : period.end.toISOString().slice(0, 10),
    };
  }

  private async tierOf(organizationId: OrganizationId): Promise<string> {
    return (await this.organizations.get(organizationId)).serviceTier;
  }
}
