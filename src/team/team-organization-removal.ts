import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import {
  OnOrganizationRemoved,
  type OrganizationRemovalParticipant,
} from '../organizations/organization-lifecycle.service.js';

/** Nobody accepts an invite into an organization that is going away: its pending invites are revoked. */
@Injectable()
@OnOrganizationRemoved()
export class TeamOrganizationRemoval implements OrganizationRemovalParticipant {
  async whileScheduling(manager: EntityManager, organizationIds: readonly string[]): Promise<void> {
    await manager.query(
      `UPDATE invites SET status = 'revoked', updated_at = now()
        WHERE organization_id = ANY($1::uuid[]) AND status = 'pending'`,
      [organizationIds],
    );
  }
}
