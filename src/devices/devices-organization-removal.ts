import { Injectable, type OnModuleInit } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import {
  OrganizationLifecycleService,
  type OrganizationRemovalParticipant,
} from '../organizations/organization-lifecycle.service.js';
import { announceOrganizationsDeleted } from './blocked-devices.js';

/** Every instance stops honouring the device tokens of a removed organization's apps on commit. */
@Injectable()
export class DevicesOrganizationRemoval implements OrganizationRemovalParticipant, OnModuleInit {
  constructor(private readonly lifecycle: OrganizationLifecycleService) {}

  onModuleInit(): void {
    this.lifecycle.register(this);
  }

  async whileRemoving(manager: EntityManager, organizationIds: readonly string[]): Promise<void> {
    await announceOrganizationsDeleted(manager, [...organizationIds]);
  }
}
