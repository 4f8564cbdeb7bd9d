import type { OrganizationId } from '../common/access/tenant-id.js';
import { Injectable } from '@nestjs/common';
import { OrganizationSource, type OrganizationSources } from '../organizations/organization-sources.service.js';
import { MadRepository } from './mad.repository.js';

/** The month's device count on the organization's billing summary, read from usage's counters. */
@Injectable()
@OrganizationSource(['monthlyActiveDevices'])
export class UsageOrganizationSources implements Pick<OrganizationSources, 'monthlyActiveDevices'> {
  constructor(private readonly counters: MadRepository) {}

  /** The devices that attested since the start of the current calendar month (UTC). */
  monthlyActiveDevices(organizationId: OrganizationId): Promise<number> {
    return this.counters.calendarMonthActiveDevices(organizationId);
  }
}
