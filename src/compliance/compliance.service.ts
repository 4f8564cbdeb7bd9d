import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { OrgAuthContext } from '../common/access/auth-context.js';
import { badRequest } from '../common/errors/app-exception.js';
import { AuditService } from '../audit/audit.service.js';
import type { ComplianceSettings } from './compliance-checks.js';
import { complianceSettingsOf, type ComplianceSettingsInForce } from './compliance-settings.js';
import type { UpdateComplianceDto } from './compliance.dto.js';
import { PlanService } from '../organizations/plan.service.js';

type Field = keyof ComplianceSettings;

const COLUMNS: Readonly<Record<Field, string>> = {
  maxRiskScore: 'max_risk_score',
  minOsVersion: 'min_os_version',
  minAppVersion: 'min_app_version',
  blockOnJailbreak: 'block_on_jailbreak',
  allowedCountries: 'allowed_countries',
};
const FIELDS = Object.keys(COLUMNS) as Field[];

type StoredRow = Record<(typeof COLUMNS)[Field], unknown>;

/**
 * The organization's compliance settings: read by any member on any plan (the defaults below
 * Business), changed by Admins on plans with `complianceRules`. Device details, the
 * `device.high_risk` threshold and reporting read them through `complianceSettingsOf`.
 */
@Injectable()
export class ComplianceService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly audit: AuditService,
    private readonly plans: PlanService,
  ) {}

  async get(auth: OrgAuthContext): Promise<ComplianceSettingsInForce> {
    return complianceSettingsOf(this.dataSource, auth.organizationId, await this.plans.planOf(auth.organizationId));
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
    return this.dataSource.transaction(async (manager) => {
      const plan = await this.plans.requireFeature(
        auth.organizationId,
        'complianceRules',
        {
          message: 'Compliance rules are available from the Business plan',
          hint: 'Upgrade the plan to set compliance rules',
        },
        { manager },
      );
      await manager.query(
        `INSERT INTO compliance_settings (organization_id) VALUES ($1) ON CONFLICT (organization_id) DO NOTHING`,
        [auth.organizationId],
      );
      const [stored] = await manager.query<StoredRow[]>(
        `SELECT ${FIELDS.map((field) => COLUMNS[field]).join(', ')}
           FROM compliance_settings WHERE organization_id = $1 FOR UPDATE`,
        [auth.organizationId],
      );
      const changed = given.filter((field) => !sameValue(stored[COLUMNS[field]], changes[field]));
      if (changed.length) {
        await manager.query(
          `UPDATE compliance_settings
              SET ${changed.map((field, i) => `${COLUMNS[field]} = $${i + 2}`).join(', ')}, updated_at = now()
            WHERE organization_id = $1`,
          [auth.organizationId, ...changed.map((field) => changes[field])],
        );
        await this.audit.record(
          auth,
          {
            organizationId: auth.organizationId,
            action: 'compliance.updated',
            resourceType: 'compliance_settings',
            resourceId: auth.organizationId,
            metadata: {
              changes: Object.fromEntries(
                changed.map((field) => [field, { from: stored[COLUMNS[field]], to: changes[field] }]),
              ),
            },
          },
          manager,
        );
      }
      return complianceSettingsOf(manager, auth.organizationId, plan);
    });
  }
}

function sameValue(stored: unknown, next: unknown): boolean {
  return JSON.stringify(stored ?? null) === JSON.stringify(next ?? null);
}
