import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import {
  OnOrganizationRemoved,
  type OrganizationRemovalParticipant,
} from '../organizations/organization-lifecycle.service.js';
import { ApiKeysService, announceApiKeysRevoked } from './api-keys.service.js';

/** A removed organization's keys stop working on every instance, and this one forgets them at once. */
@Injectable()
@OnOrganizationRemoved()
export class ApiKeysOrganizationRemoval implements OrganizationRemovalParticipant {
  constructor(private readonly apiKeys: ApiKeysService) {}

  async whileRemoving(manager: EntityManager, organizationIds: readonly string[]): Promise<void> {
    for (const organizationId of organizationIds) await announceApiKeysRevoked(manager, { organizationId });
  }

  afterRemoval(organizationIds: readonly string[]): void {
    const removed = new Set(organizationIds);
    this.apiKeys.forgetWhere((key) => removed.has(key.organizationId));
  }
}
