import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { notFound } from '../common/errors/app-exception.js';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { swiftQuickstartSnippet } from './quickstart-snippet.js';

export interface QuickstartSnippet {
  appId: string;
  appName: string;
  teamId: string;
  bundleId: string;
  swiftSnippet: string;
}

/** The quick start for the organization's primary app. */
@Injectable()
export class QuickstartService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async snippet(organizationId: string): Promise<QuickstartSnippet> {
    // The primary app; should none be marked, the oldest active app, then the oldest app.
    const rows: { id: string; app_name: string; bundle_id: string; team_id: string }[] = await this.dataSource.query(
      `SELECT id, app_name, bundle_id, team_id FROM apps WHERE organization_id = $1
        ORDER BY is_primary DESC, is_active DESC, created_at, id LIMIT 1`,
      [organizationId],
    );
    const app = rows[0];
    if (!app) throw notFound('App', { hint: 'Register an app first: the quick start is made for it' });
    return {
      appId: app.id,
      appName: app.app_name,
      teamId: app.team_id,
      bundleId: app.bundle_id,
      swiftSnippet: swiftQuickstartSnippet({
        baseUrl: this.config.baseUrl,
        appName: app.app_name,
        bundleId: app.bundle_id,
        teamId: app.team_id,
      }),
    };
  }
}
