import { Injectable } from '@nestjs/common';
import type { OrganizationId } from '../common/access/tenant-id.js';
import {
  OnOrganizationRemoved,
  type OrganizationRemovalParticipant,
} from '../organizations/organization-lifecycle.service.js';
import { InvitesRepository } from './invites.repository.js';

/** Nobody accepts an invite into an organization that is going away: its pending invites are revoked. */
@Injectable()
@OnOrganizationRemoved()
export class TeamOrganizationRemoval implements OrganizationRemovalParticipant {
  constructor(private readonly invites: InvitesRepository) {}

  async scheduling(organizationIds: readonly OrganizationId[]): Promise<void> {
    await this.invites.revokePending(organizationIds);
  }
}
