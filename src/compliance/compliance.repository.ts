import { Injectable } from '@nestjs/common';
import type { OrganizationId } from '../common/access/tenant-id.js';
import { queryRows } from '../database/sql.js';
import { UnitOfWork } from '../database/unit-of-work.js';
import type { ComplianceSettings } from './compliance-checks.js';

/** What an Admin saved; null fields were never set (the row exists once anything was saved). */
export interface SavedComplianceSettings {
  maxRiskScore: number | null;
  minOsVersion: string | null;
  minAppVersion: string | null;
  blockOnJailbreak: boolean | null;
  allowedCountries: string[] | null;
  updatedAt: Date | null;
}

interface SettingsRow {
  max_risk_score: number | null;
  min_os_version: string | null;
  min_app_version: string | null;
  block_on_jailbreak: boolean | null;
  allowed_countries: string[] | null;
  updated_at: Date | null;
}

const COLUMNS: Readonly<Record<keyof ComplianceSettings, string>> = {
  maxRiskScore: 'max_risk_score',
  minOsVersion: 'min_os_version',
  minAppVersion: 'min_app_version',
  blockOnJailbreak: 'block_on_jailbreak',
  allowedCountries: 'allowed_countries',
};

/** The owner of `compliance_settings`: one row per organization, absent until an Admin saves. */
@Injectable()
export class ComplianceRepository {
  constructor(private readonly uow: UnitOfWork) {}

  /** The organization's saved settings, or null without a row. */
  async find(organizationId: OrganizationId): Promise<SavedComplianceSettings | null> {
    const [row] = await queryRows<SettingsRow>(
      this.uow.manager(),
      `SELECT max_risk_score, min_os_version, min_app_version, block_on_jailbreak, allowed_countries, updated_at
         FROM compliance_settings WHERE organization_id = $1`,
      [organizationId],
    );
    return row ? saved(row) : null;
  }

  /** The organization's row (created empty when missing), locked until the unit of work ends. */
  async lock(organizationId: OrganizationId): Promise<SavedComplianceSettings> {
    const manager = this.uow.manager();
    await manager.query(
      `INSERT INTO compliance_settings (organization_id) VALUES ($1) ON CONFLICT (organization_id) DO NOTHING`,
      [organizationId],
    );
    const [row] = await manager.query<SettingsRow[]>(
      `SELECT max_risk_score, min_os_version, min_app_version, block_on_jailbreak, allowed_countries, updated_at
         FROM compliance_settings WHERE organization_id = $1 FOR UPDATE`,
      [organizationId],
    );
    return saved(row);
  }

  /** Saves the given settings (the others keep their values). */
  async update(organizationId: OrganizationId, changes: Partial<ComplianceSettings>): Promise<void> {
    const fields = (Object.keys(COLUMNS) as (keyof ComplianceSettings)[]).filter(
      (field) => changes[field] !== undefined,
    );
    if (!fields.length) return;
    await this.uow.manager().query(
      `UPDATE compliance_settings
          SET ${fields.map((field, i) => `${COLUMNS[field]} = $${i + 2}`).join(', ')}, updated_at = now()
        WHERE organization_id = $1`,
      [organizationId, ...fields.map((field) => changes[field])],
    );
  }
}

function saved(row: SettingsRow): SavedComplianceSettings {
  return {
    maxRiskScore: row.max_risk_score,
    minOsVersion: row.min_os_version,
    minAppVersion: row.min_app_version,
    blockOnJailbreak: row.block_on_jailbreak,
    allowedCountries: row.allowed_countries,
    updatedAt: row.updated_at,
  };
}
