import { Injectable, type OnModuleInit } from '@nestjs/common';
import type { OrganizationId } from '../common/access/tenant-id.js';
import {
  OrganizationLifecycleService,
  type OrganizationRemovalParticipant,
} from '../organizations/organization-lifecycle.service.js';
import { InvitesRepository } from './invites.repository.js';

/** Nobody accepts an invite into an organization that is going away: its pending invites are revoked. */
@Injectable()
export class TeamOrganizationRemoval implements OrganizationRemovalParticipant, OnModuleInit {
  constructor(
    private readonly lifecycle: OrganizationLifecycleService,
    private readonly invites: InvitesRepository,
  ) {}

  onModuleInit(): void {
    this.lifecycle.register(this);
  }

  async scheduling(organizationIds: readonly OrganizationId[]): Promise<void> {
    await this.invites.revokePending(organizationIds);
  }
}
