import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { OrganizationSource, type OrganizationSources } from '../organizations/organization-sources.service.js';

/** The month's device count on the organization's billing summary, read from usage's counters. */
@Injectable()
@OrganizationSource(['monthlyActiveDevices'])
export class UsageOrganizationSources implements Pick<OrganizationSources, 'monthlyActiveDevices'> {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** The devices that attested since the start of the current calendar month (UTC). */
  async monthlyActiveDevices(organizationId: string): Promise<number> {
    const rows: { active_devices: number }[] = await this.dataSource.query(
      `SELECT active_devices FROM mad_counters
        WHERE organization_id = $1 AND period_start = date_trunc('month', now() AT TIME ZONE 'utc')::date`,
      [organizationId],
    );
    return rows[0]?.active_devices ?? 0;
  }
}
