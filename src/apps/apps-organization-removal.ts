import { Injectable, type OnModuleInit } from '@nestjs/common';
import type { OrganizationId } from '../common/access/tenant-id.js';
import { TokenRevocationsRepository } from '../devices/token-revocations.repository.js';
import {
  OrganizationLifecycleService,
  type OrganizationRemovalParticipant,
} from '../organizations/organization-lifecycle.service.js';
import { AppsRepository } from './apps.repository.js';
import { TenantResolver } from './tenant-resolver.js';

/** The removal's transaction as the organization lifecycle still hands it over. */
type RemovalTransaction = Parameters<NonNullable<OrganizationRemovalParticipant['whileRemoving']>>[0];

/**
 * The apps of a removed organization are deleted with it: every instance stops honouring their
 * device tokens on commit (announced as each app's deletion is), and they leave this instance's
 * tenant cache once the removal commits.
 */
@Injectable()
export class AppsOrganizationRemoval implements OrganizationRemovalParticipant, OnModuleInit {
  constructor(
    private readonly lifecycle: OrganizationLifecycleService,
    private readonly apps: AppsRepository,
    private readonly revocations: TokenRevocationsRepository,
    private readonly tenants: TenantResolver,
  ) {}

  onModuleInit(): void {
    this.lifecycle.register(this);
  }

  // seam: src/organizations/organization-lifecycle.service.ts#whileRemoving hands its transaction and plain ids
  async whileRemoving(transaction: RemovalTransaction, organizationIds: readonly string[]): Promise<void> {
    const appIds = await this.apps.idsOf(organizationIds as readonly OrganizationId[], transaction);
    await this.revocations.announceAppsDeleted(appIds, transaction);
  }

  afterRemoval(): void {
    this.tenants.forgetAll();
  }
}
