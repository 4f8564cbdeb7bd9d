import { Inject, Injectable } from '@nestjs/common';
import { notFound } from '../common/errors/app-exception.js';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { OrganizationSourcesService } from './organization-sources.service.js';
import { swiftQuickstartSnippet } from './quickstart-snippet.js';

export interface QuickstartSnippet {
  appId: string;
  appName: string;
  /** Null with bundleId when the primary app is Android-only. */
  teamId: string | null;
  bundleId: string | null;
  /** The Swift SDK set-up for the app; null when it is Android-only (no iOS identity to configure). */
  swiftSnippet: string | null;
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
      swiftSnippet:
        app.bundleId !== null && app.teamId !== null
          ? swiftQuickstartSnippet({
              baseUrl: this.config.baseUrl,
              appName: app.name,
              bundleId: app.bundleId,
              teamId: app.teamId,
            })
          : null,
    };
  }
}
