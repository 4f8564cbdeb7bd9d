import { Injectable } from '@nestjs/common';
import type { OrganizationId } from '../common/access/tenant-id.js';
import {
  OnOrganizationRemoved,
  type OrganizationRemovalParticipant,
} from '../organizations/organization-lifecycle.service.js';
import { ApiKeysService } from './api-keys.service.js';

/** A removed organization's keys stop working on every instance, and this one forgets them at once. */
@Injectable()
@OnOrganizationRemoved()
export class ApiKeysOrganizationRemoval implements OrganizationRemovalParticipant {
  constructor(private readonly apiKeys: ApiKeysService) {}

  async removing(organizationIds: readonly OrganizationId[]): Promise<void> {
    for (const organizationId of organizationIds) await this.apiKeys.announceOrganizationRemoved(organizationId);
  }

  afterRemoval(organizationIds: readonly string[]): void {
    const removed = new Set(organizationIds);
    this.apiKeys.forgetWhere((key) => removed.has(key.organizationId));
  }
}
