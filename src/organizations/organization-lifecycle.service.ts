import { Injectable, type OnModuleInit } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import type { OrganizationId } from '../common/access/tenant-id.js';
import { discovered } from '../common/discovery/discovered.js';
import type { Organization } from './organization.entity.js';

/**
 * What a feature does when organizations go away, so the organizations feature deletes them
 * without knowing the features that keep something of theirs outside the cascading tables
 * (a paid subscription at the provider, caches, notifications to other instances). A feature
 * marks its participant, a provider of its own module, with `@OnOrganizationRemoved()`.
 */
export interface OrganizationRemovalParticipant {
  /**
   * Before anything is written: the organizations will be deleted (now, or when their only
   * member's account is erased). A throw leaves every organization as it was.
   */
  beforeRemoval?(organizations: readonly Organization[]): Promise<void>;
  /**
   * In the unit of work that schedules the organizations' removal (they go with the account of
   * their only member when its deletion falls due): nothing new may join them from now on.
   */
  scheduling?(organizationIds: readonly OrganizationId[]): Promise<void>;
  /** In the unit of work that deletes the organizations' rows (announcements fire on commit). */
  removing?(organizationIds: readonly OrganizationId[]): Promise<void>;
  /** After that unit of work has committed: this instance forgets what it remembered of them. */
  afterRemoval?(organizationIds: readonly string[]): void;
}

/** Marks a provider as an `OrganizationRemovalParticipant`: OrganizationLifecycleService calls it. */
export const OnOrganizationRemoved = DiscoveryService.createDecorator<void>();

/**
 * The participants in removing organizations: every provider marked `@OnOrganizationRemoved()`,
 * found when this module starts. Each phase calls all of them, in the order their modules were
 * registered, before the next phase starts; no participant depends on another's work in a phase.
 */
@Injectable()
export class OrganizationLifecycleService implements OnModuleInit {
  private participants: readonly OrganizationRemovalParticipant[] = [];

  constructor(private readonly discovery: DiscoveryService) {}

  onModuleInit(): void {
    this.participants = discovered<OrganizationRemovalParticipant, void>(this.discovery, OnOrganizationRemoved).map(
      ({ instance }) => instance,
    );
  }

  async beforeRemoval(organizations: readonly Organization[]): Promise<void> {
    if (!organizations.length) return;
    for (const participant of this.participants) await participant.beforeRemoval?.(organizations);
  }

  /** In the caller's unit of work. */
  async scheduling(organizationIds: readonly OrganizationId[]): Promise<void> {
    if (!organizationIds.length) return;
    for (const participant of this.participants) await participant.scheduling?.(organizationIds);
  }

  /** In the caller's unit of work. */
  async removing(organizationIds: readonly OrganizationId[]): Promise<void> {
    if (!organizationIds.length) return;
    for (const participant of this.participants) await participant.removing?.(organizationIds);
  }

  afterRemoval(organizationIds: readonly string[]): void {
    if (!organizationIds.length) return;
    for (const participant of this.participants) participant.afterRemoval?.(organizationIds);
  }
}
