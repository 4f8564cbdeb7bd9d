import { beforeEach, describe, expect, it } from '@jest/globals';
import { fakeAudit, type FakeAuditRepository } from '../../test/fakes/audit.js';
import { FakeComplianceRepository } from '../../test/fakes/compliance.js';
import { fakeOrganizations, sessionAuth, type FakeOrganizationsRepository } from '../../test/fakes/organizations.js';
import { FakeUnitOfWork } from '../../test/fakes/unit-of-work.js';
import { PlanService } from '../organizations/plan.service.js';
import type { OrganizationRecord } from '../organizations/organizations.repository.js';
import type { ComplianceRepository } from './compliance.repository.js';
import { ComplianceService } from './compliance.service.js';

describe('ComplianceService', () => {
  let repository: FakeOrganizationsRepository;
  let settings: FakeComplianceRepository;
  let log: FakeAuditRepository;
  let compliance: ComplianceService;
  let org: OrganizationRecord;

  beforeEach(() => {
    const fakes = fakeOrganizations();
    repository = fakes.repository;
    settings = new FakeComplianceRepository();
    const audited = fakeAudit();
    log = audited.log;
    compliance = new ComplianceService(
      new FakeUnitOfWork().asUnitOfWork(),
      settings as unknown as ComplianceRepository,
      audited.audit,
      new PlanService(fakes.organizations),
    );
    org = repository.seed({ tier: 'professional', owner: 'owner-1' });
  });

  const admin = () => sessionAuth(org.id, 'owner-1', 'owner');

  it('answers the defaults until an Admin saves settings', async () => {
    expect(await compliance.get(admin())).toEqual({
      maxRiskScore: 50,
      minOsVersion: null,
      minAppVersion: null,
      blockOnJailbreak: false,
      allowedCountries: null,
      updatedAt: null,
    });
  });

  it('saves a partial update under the row lock and audits only what changed, from and to', async () => {
    const saved = await compliance.update(admin(), { maxRiskScore: 70, minOsVersion: '17.0' });
    expect(saved).toMatchObject({ maxRiskScore: 70, minOsVersion: '17.0', blockOnJailbreak: false });
    expect(saved.updatedAt).toBeInstanceOf(Date);
    expect(settings.locked).toEqual([org.id]);
    await compliance.update(admin(), { maxRiskScore: 70, blockOnJailbreak: true });
    expect(log.rows.map((row) => row.metadata)).toEqual([
      { changes: { maxRiskScore: { from: null, to: 70 }, minOsVersion: { from: null, to: '17.0' } } },
      { changes: { blockOnJailbreak: { from: null, to: true } } },
    ]);
    await compliance.update(admin(), { maxRiskScore: 70 });
    expect(log.rows).toHaveLength(2);
  });

  it('refuses an update without any setting (400)', async () => {
    await expect(compliance.update(admin(), {})).rejects.toMatchObject({ status: 400 });
  });

  it('refuses changes below Business (403 feature_unavailable), and answers the defaults there while saved settings wait', async () => {
    await compliance.update(admin(), { maxRiskScore: 20 });
    org.serviceTier = 'basic';
    await expect(compliance.update(admin(), { maxRiskScore: 30 })).rejects.toMatchObject({ status: 403 });
    expect((await compliance.get(admin())).maxRiskScore).toBe(50);
    org.serviceTier = 'professional';
    expect((await compliance.get(admin())).maxRiskScore).toBe(20);
  });

  it('keeps each organization’s settings to itself', async () => {
    const other = repository.seed({ tier: 'professional', owner: 'owner-2' });
    await compliance.update(admin(), { maxRiskScore: 10 });
    expect((await compliance.get(sessionAuth(other.id, 'owner-2', 'owner'))).maxRiskScore).toBe(50);
  });
});
