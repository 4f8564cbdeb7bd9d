import { Injectable, type OnModuleInit } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import {
  OrganizationLifecycleService,
  type OrganizationRemovalParticipant,
} from '../organizations/organization-lifecycle.service.js';

/** Nobody accepts an invite into an organization that is going away: its pending invites are revoked. */
@Injectable()
export class TeamOrganizationRemoval implements OrganizationRemovalParticipant, OnModuleInit {
  constructor(private readonly lifecycle: OrganizationLifecycleService) {}

  onModuleInit(): void {
    this.lifecycle.register(this);
  }

  async whileScheduling(manager: EntityManager, organizationIds: readonly string[]): Promise<void> {
    await manager.query(
      `UPDATE invites SET status = 'revoked', updated_at = now()
        WHERE organization_id = ANY($1::uuid[]) AND status = 'pending'`,
      [organizationIds],
    );
  }
}
