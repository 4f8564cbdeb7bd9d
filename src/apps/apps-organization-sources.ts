import { Injectable, type OnModuleInit } from '@nestjs/common';
import type { OrganizationId } from '../common/access/tenant-id.js';
import { OrganizationSourcesService, type PrimaryApp } from '../organizations/organization-sources.service.js';
import { AppsRepository } from './apps.repository.js';

/** The app the organization's quick start is made for, read from apps' own table. */
@Injectable()
export class AppsOrganizationSources implements OnModuleInit {
  constructor(
    private readonly apps: AppsRepository,
    private readonly sources: OrganizationSourcesService,
  ) {}

  onModuleInit(): void {
    // seam: src/organizations/organization-sources.service.ts#primaryApp hands a string until it takes an OrganizationId
    this.sources.provide('primaryApp', (organizationId) => this.primaryApp(organizationId as OrganizationId));
  }

  /** The primary app; should none be marked, the oldest active app, then the oldest app. */
  primaryApp(organizationId: OrganizationId): Promise<PrimaryApp | null> {
    return this.apps.primaryApp(organizationId);
  }
}
