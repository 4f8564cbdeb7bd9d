import { Injectable, type OnModuleInit } from '@nestjs/common';
import { OrganizationSourcesService } from '../organizations/organization-sources.service.js';
import { MadRepository } from './mad.repository.js';

/** The month's device count on the organization's billing summary, read from usage's counters. */
@Injectable()
export class UsageOrganizationSources implements OnModuleInit {
  constructor(
    private readonly counters: MadRepository,
    private readonly sources: OrganizationSourcesService,
  ) {}

  onModuleInit(): void {
    this.sources.provide('monthlyActiveDevices', (organizationId) => this.monthlyActiveDevices(organizationId));
  }

  /** The devices that attested since the start of the current calendar month (UTC). */
  monthlyActiveDevices(organizationId: string): Promise<number> {
    return this.counters.calendarMonthActiveDevices(organizationId);
  }
}
