import { Injectable } from '@nestjs/common';

/** The app the quick start is made for. */
export interface PrimaryApp {
  id: string;
  name: string;
  bundleId: string;
  teamId: string;
}

/** The reads organization pages show of features that import organizations, each provided by its owner. */
export interface OrganizationSources {
  /** usage: the devices that attested since the start of the current calendar month (UTC). */
  monthlyActiveDevices(organizationId: string): Promise<number>;
  /** apps: the primary app; should none be marked, the oldest active app, then the oldest app; null without apps. */
  primaryApp(organizationId: string): Promise<PrimaryApp | null>;
}

/**
 * What the organization's own pages (the billing summary, the quick start) show of features that
 * import organizations and so cannot be called from here: usage and apps provide their read when
 * their module starts (`OrganizationSourcesService.provide`), as removal participants register
 * with OrganizationLifecycleService, and their tables stay theirs.
 */
@Injectable()
export class OrganizationSourcesService implements OrganizationSources {
  private readonly sources: Partial<OrganizationSources> = {};

  provide<K extends keyof OrganizationSources>(name: K, read: OrganizationSources[K]): void {
    this.sources[name] = read;
  }

  monthlyActiveDevices(organizationId: string): Promise<number> {
    return this.source('monthlyActiveDevices')(organizationId);
  }

  primaryApp(organizationId: string): Promise<PrimaryApp | null> {
    return this.source('primaryApp')(organizationId);
  }

  private source<K extends keyof OrganizationSources>(name: K): OrganizationSources[K] {
    const read = this.sources[name];
    if (!read) throw new Error(`No feature provides the organization source ${name}`);
    return read;
  }
}
