import { Injectable } from '@nestjs/common';
import type { OrganizationId } from '../common/access/tenant-id.js';
import { TokenRevocationsRepository } from '../devices/token-revocations.repository.js';
import {
  OnOrganizationRemoved,
  type OrganizationRemovalParticipant,
} from '../organizations/organization-lifecycle.service.js';
import { AppsRepository } from './apps.repository.js';
import { TenantResolver } from './tenant-resolver.js';

/**
 * The apps of a removed organization are deleted with it: every instance stops honouring their
 * device tokens on commit (announced as each app's deletion is), and they leave this instance's
 * tenant cache once the removal commits.
 */
@Injectable()
@OnOrganizationRemoved()
export class AppsOrganizationRemoval implements OrganizationRemovalParticipant {
  constructor(
    private readonly apps: AppsRepository,
    private readonly revocations: TokenRevocationsRepository,
    private readonly tenants: TenantResolver,
  ) {}

  /** In the removal's unit of work: the announcement is delivered on its commit. */
  async removing(organizationIds: readonly OrganizationId[]): Promise<void> {
    const appIds = await this.apps.idsOf(organizationIds);
    await this.revocations.announceAppsDeleted(appIds);
  }

  afterRemoval(): void {
    this.tenants.forgetAll();
  }
}
