import type { OrganizationId } from '../common/access/tenant-id.js';
import { Injectable, type OnModuleInit } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import { discovered, providedSources } from '../common/discovery/discovered.js';

/** The app the quick start is made for. */
export interface PrimaryApp {
  id: string;
  name: string;
  /** Null with teamId for an Android-only app. */
  bundleId: string | null;
  teamId: string | null;
}

/** The reads organization pages show of features that import organizations, each provided by its owner. */
export interface OrganizationSources {
  /** usage: the devices that attested since the start of the current calendar month (UTC). */
  monthlyActiveDevices(organizationId: OrganizationId): Promise<number>;
  /** apps: the primary app; should none be marked, the oldest active app, then the oldest app; null without apps. */
  primaryApp(organizationId: string): Promise<PrimaryApp | null>;
}

/**
 * Marks a provider that implements the named reads of `OrganizationSources` (methods of the same
 * names): OrganizationSourcesService finds it when the organizations module starts.
 */
export const OrganizationSource = DiscoveryService.createDecorator<(keyof OrganizationSources)[]>();

/**
 * What the organization's own pages (the billing summary, the quick start) show of features that
 * import organizations and so cannot be called from here: usage and apps mark a provider of theirs
 * `@OrganizationSource('monthlyActiveDevices')`, `@OrganizationSource('primaryApp')`, and their
 * tables stay theirs. Two providers of one read fail the start.
 */
@Injectable()
export class OrganizationSourcesService implements OrganizationSources, OnModuleInit {
  private sources: Partial<OrganizationSources> = {};

  constructor(private readonly discovery: DiscoveryService) {}

  onModuleInit(): void {
    this.sources = providedSources<OrganizationSources>(
      'organization source',
      discovered<Partial<OrganizationSources>, (keyof OrganizationSources)[]>(this.discovery, OrganizationSource),
    );
  }

  // async, so that a missing source rejects like a failed read rather than throwing at the call.
  async monthlyActiveDevices(organizationId: OrganizationId): Promise<number> {
    return this.source('monthlyActiveDevices')(organizationId);
  }

  async primaryApp(organizationId: string): Promise<PrimaryApp | null> {
    return this.source('primaryApp')(organizationId);
  }

  private source<K extends keyof OrganizationSources>(name: K): OrganizationSources[K] {
    const read = this.sources[name];
    if (!read) throw new Error(`No feature provides the organization source ${name}`);
    return read;
  }
}
