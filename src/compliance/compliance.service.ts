import { Injectable } from '@nestjs/common';
import type { OrgAuthContext } from '../common/access/auth-context.js';
import type { OrganizationId } from '../common/access/tenant-id.js';
import { badRequest } from '../common/errors/app-exception.js';
import type { TierDefinition } from '../common/tiers.js';
import { AuditService } from '../audit/audit.service.js';
import { UnitOfWork } from '../database/unit-of-work.js';
import type { ComplianceSettings } from './compliance-checks.js';
import { settingsInForce, type ComplianceSettingsInForce } from './compliance-settings.js';
import type { UpdateComplianceDto } from './compliance.dto.js';
import { ComplianceRepository } from './compliance.repository.js';
import { PlanService } from '../organizations/plan.service.js';

type Field = keyof ComplianceSettings;

const FIELDS: readonly Field[] = [
  'maxRiskScore',
  'minOsVersion',
  'minAppVersion',
  'blockOnJailbreak',
  'allowedCountries',
];

/**
 * The organization's compliance settings: read by any member on any plan (the defaults below
 * Business), changed by Admins on plans with `complianceRules`. Device details, the
 * `device.high_risk` threshold and reporting read them through `settingsInForce`.
 */
@Injectable()
export class ComplianceService {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly settings: ComplianceRepository,
    private readonly audit: AuditService,
    private readonly plans: PlanService,
  ) {}

  async get(auth: OrgAuthContext): Promise<ComplianceSettingsInForce> {
    return this.settingsInForce(auth.organizationId, await this.plans.planOf(auth.organizationId));
  }

  /** The settings in force under `plan` (the defaults without `complianceRules`, with no read). */
  async settingsInForce(organizationId: OrganizationId, plan: TierDefinition): Promise<ComplianceSettingsInForce> {
    if (!plan.features.complianceRules) return settingsInForce(null, plan);
    return settingsInForce(await this.settings.find(organizationId), plan);
  }

  /** A partial update under a lock of the settings row, audited with each change. */
  async update(auth: OrgAuthContext, input: UpdateComplianceDto): Promise<ComplianceSettingsInForce> {
    const changes = input as Partial<ComplianceSettings>;
    const given = FIELDS.filter((field) => changes[field] !== undefined);
    if (!given.length) {
      throw badRequest('Give at least one compliance setting to change', {
        hint: `Settings: ${FIELDS.join(', ')}`,
      });
    }
    return this.uow.run(async () => {
      const plan = await this.plans.requireFeature(auth.organizationId, 'complianceRules', {
        message: 'Compliance rules are available from the Business plan',
        hint: 'Upgrade the plan to set compliance rules',
      });
      const stored = await this.settings.lock(auth.organizationId);
      const changed = given.filter((field) => !sameValue(stored[field], changes[field]));
      if (changed.length) {
        await this.settings.update(
          auth.organizationId,
          Object.fromEntries(changed.map((field) => [field, changes[field]])),
        );
        await this.audit.record(auth, {
          organizationId: auth.organizationId,
          action: 'compliance.updated',
          resourceType: 'compliance_settings',
          resourceId: auth.organizationId,
          metadata: {
            changes: Object.fromEntries(changed.map((field) => [field, { from: stored[field], to: changes[field] }])),
          },
        });
      }
      return this.settingsInForce(auth.organizationId, plan);
    });
  }
}

function sameValue(stored: unknown, next: unknown): boolean {
  return JSON.stringify(stored ?? null) === JSON.stringify(next ?? null);
}
