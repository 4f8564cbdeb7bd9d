import { Injectable, type OnModuleInit } from '@nestjs/common';
import {
  OrganizationLifecycleService,
  type OrganizationRemovalParticipant,
} from '../organizations/organization-lifecycle.service.js';
import { TenantResolver } from './tenant-resolver.js';

/** The apps of a removed organization leave this instance's tenant cache once the removal commits. */
@Injectable()
export class AppsOrganizationRemoval implements OrganizationRemovalParticipant, OnModuleInit {
  constructor(
    private readonly lifecycle: OrganizationLifecycleService,
    private readonly tenants: TenantResolver,
  ) {}

  onModuleInit(): void {
    this.lifecycle.register(this);
  }

  afterRemoval(): void {
    this.tenants.forgetAll();
  }
}
