import { Inject, Injectable } from '@nestjs/common';
import { notFound } from '../common/errors/app-exception.js';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { OrganizationSourcesService } from './organization-sources.service.js';
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
    private readonly sources: OrganizationSourcesService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async snippet(organizationId: string): Promise<QuickstartSnippet> {
    const app = await this.sources.primaryApp(organizationId);
    if (!app) throw notFound('App', { hint: 'Register an app first: the quick start is made for it' });
    return {
      appId: app.id,
      appName: app.name,
      teamId: app.teamId,
      bundleId: app.bundleId,
      swiftSnippet: swiftQuickstartSnippet({
        baseUrl: this.config.baseUrl,
        appName: app.name,
        bundleId: app.bundleId,
        teamId: app.teamId,
      }),
    };
  }
}
