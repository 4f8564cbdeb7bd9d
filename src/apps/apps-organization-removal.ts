import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { announceAppsDeleted } from '../devices/deny-set.js';
import {
  OnOrganizationRemoved,
  type OrganizationRemovalParticipant,
} from '../organizations/organization-lifecycle.service.js';
import { TenantResolver } from './tenant-resolver.js';

/**
 * The apps of a removed organization are deleted with it: every instance stops honouring their
 * device tokens on commit (announced as each app's deletion is), and they leave this instance's
 * tenant cache once the removal commits.
 */
@Injectable()
@OnOrganizationRemoved()
export class AppsOrganizationRemoval implements OrganizationRemovalParticipant {
  constructor(private readonly tenants: TenantResolver) {}

  async whileRemoving(manager: EntityManager, organizationIds: readonly string[]): Promise<void> {
    const apps = await manager.query<{ id: string }[]>(`SELECT id FROM apps WHERE organization_id = ANY($1::uuid[])`, [
      [...organizationIds],
    ]);
    await announceAppsDeleted(
      manager,
      apps.map((app) => app.id),
    );
  }

  afterRemoval(): void {
    this.tenants.forgetAll();
  }
}
