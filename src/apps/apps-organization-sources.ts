import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import {
  OrganizationSource,
  type OrganizationSources,
  type PrimaryApp,
} from '../organizations/organization-sources.service.js';

/** The app the organization's quick start is made for, read from apps' own table. */
@Injectable()
@OrganizationSource(['primaryApp'])
export class AppsOrganizationSources implements Pick<OrganizationSources, 'primaryApp'> {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** The primary app; should none be marked, the oldest active app, then the oldest app. */
  async primaryApp(organizationId: string): Promise<PrimaryApp | null> {
    const rows: { id: string; app_name: string; bundle_id: string; team_id: string }[] = await this.dataSource.query(
      `SELECT id, app_name, bundle_id, team_id FROM apps WHERE organization_id = $1
        ORDER BY is_primary DESC, is_active DESC, created_at, id LIMIT 1`,
      [organizationId],
    );
    const app = rows[0];
    return app ? { id: app.id, name: app.app_name, bundleId: app.bundle_id, teamId: app.team_id } : null;
  }
}
