import type { OrganizationId } from '../../src/common/access/tenant-id.js';
import type { ComplianceSettings } from '../../src/compliance/compliance-checks.js';
import type { ComplianceRepository, SavedComplianceSettings } from '../../src/compliance/compliance.repository.js';

type Public<T> = { [K in keyof T]: T[K] };

const EMPTY: SavedComplianceSettings = {
  maxRiskScore: null,
  minOsVersion: null,
  minAppVersion: null,
  blockOnJailbreak: null,
  allowedCountries: null,
  updatedAt: null,
};

/** compliance_settings in memory; `locked` lists the organizations whose row was locked. */
export class FakeComplianceRepository implements Public<ComplianceRepository> {
  readonly rows = new Map<string, SavedComplianceSettings>();
  readonly locked: string[] = [];

  find(organizationId: OrganizationId): Promise<SavedComplianceSettings | null> {
    const row = this.rows.get(organizationId);
    return Promise.resolve(row ? { ...row } : null);
  }

  lock(organizationId: OrganizationId): Promise<SavedComplianceSettings> {
    this.locked.push(organizationId);
    if (!this.rows.has(organizationId)) this.rows.set(organizationId, { ...EMPTY });
    return Promise.resolve({ ...this.rows.get(organizationId)! });
  }

  update(organizationId: OrganizationId, changes: Partial<ComplianceSettings>): Promise<void> {
    const row = this.rows.get(organizationId) ?? { ...EMPTY };
    this.rows.set(organizationId, { ...row, ...changes, updatedAt: new Date() });
    return Promise.resolve();
  }
}
