import { Injectable } from '@nestjs/common';
import type { OrganizationId } from '../common/access/tenant-id.js';
import {
  OrganizationSource,
  type OrganizationSources,
  type PrimaryApp,
} from '../organizations/organization-sources.service.js';
import { AppsRepository } from './apps.repository.js';

/** The app the organization's quick start is made for, read from apps' own table. */
@Injectable()
@OrganizationSource(['primaryApp'])
export class AppsOrganizationSources implements Pick<OrganizationSources, 'primaryApp'> {
  constructor(private readonly apps: AppsRepository) {}

  /** The primary app; should none be marked, the oldest active app, then the oldest app. */
  primaryApp(organizationId: OrganizationId): Promise<PrimaryApp | null> {
    return this.apps.primaryApp(organizationId);
  }
}
