import { randomUUID } from 'node:crypto';
import type { OrganizationId } from '../../src/common/access/tenant-id.js';
import type {
  CooldownClaim,
  RiskAlertRulesRepository,
  RuleFields,
} from '../../src/risk-alerts/risk-alert-rules.repository.js';
import type { StoredRiskAlertRule } from '../../src/risk-alerts/risk-alerts.dto.js';

type Public<T> = { [K in keyof T]: T[K] };

/** `RiskAlertRulesRepository` in memory: rules by id, each with its organization. */
export class FakeRiskAlertRules implements Public<RiskAlertRulesRepository> {
  readonly rules = new Map<string, StoredRiskAlertRule>();

  /** Copies, as rows read are: an instance's cached rules do not see what another claims later. */
  list(organizationId: OrganizationId, options: { activeOnly?: boolean } = {}): Promise<StoredRiskAlertRule[]> {
    return Promise.resolve(
      [...this.rules.values()]
        .filter((rule) => rule.organizationId === organizationId && (!options.activeOnly || rule.isActive))
        .map((rule) => ({ ...rule })),
    );
  }

  find(organizationId: OrganizationId, id: string): Promise<StoredRiskAlertRule | null> {
    const rule = this.rules.get(id);
    return Promise.resolve(rule && rule.organizationId === organizationId ? { ...rule } : null);
  }

  async count(organizationId: OrganizationId): Promise<number> {
    return (await this.list(organizationId)).length;
  }

  insert(organizationId: OrganizationId, fields: RuleFields): Promise<StoredRiskAlertRule> {
    const now = new Date();
    const rule: StoredRiskAlertRule = {
      id: randomUUID(),
      organizationId,
      ...fields,
      lastFiredAt: null,
      createdAt: now,
      updatedAt: now,
    };
    this.rules.set(rule.id, rule);
    return Promise.resolve({ ...rule });
  }

  async update(organizationId: OrganizationId, id: string, fields: RuleFields): Promise<StoredRiskAlertRule | null> {
    const rule = await this.find(organizationId, id);
    if (!rule) return null;
    const updated = { ...rule, ...fields, updatedAt: new Date() };
    this.rules.set(id, updated);
    return { ...updated };
  }

  async delete(organizationId: OrganizationId, id: string): Promise<StoredRiskAlertRule | null> {
    const rule = await this.find(organizationId, id);
    if (rule) this.rules.delete(id);
    return rule;
  }

  claimCooldown(organizationId: OrganizationId, id: string): Promise<CooldownClaim> {
    return Promise.resolve(this.claim(organizationId, id));
  }

  private claim(organizationId: OrganizationId, id: string): CooldownClaim {
    const rule = this.rules.get(id);
    if (!rule || rule.organizationId !== organizationId) return { claimedAt: null, lastFiredAt: null };
    const now = new Date();
    const free = !rule.lastFiredAt || rule.lastFiredAt.getTime() <= now.getTime() - rule.cooldownMinutes * 60_000;
    if (!free || !rule.isActive) return { claimedAt: null, lastFiredAt: rule.lastFiredAt };
    rule.lastFiredAt = now;
    return { claimedAt: now, lastFiredAt: now };
  }
}
