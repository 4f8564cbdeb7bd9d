import { Injectable, type OnModuleInit } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import type { EntityManager } from 'typeorm';
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
   * Inside the transaction that schedules the organizations' removal (they go with the account of
   * their only member when its deletion falls due): nothing new may join them from now on.
   */
  whileScheduling?(manager: EntityManager, organizationIds: readonly string[]): Promise<void>;
  /** Inside the transaction that deletes the organizations' rows (announcements fire on commit). */
  whileRemoving?(manager: EntityManager, organizationIds: readonly string[]): Promise<void>;
  /** After that transaction has committed: this instance forgets what it remembered of them. */
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

  async whileScheduling(manager: EntityManager, organizationIds: readonly string[]): Promise<void> {
    if (!organizationIds.length) return;
    for (const participant of this.participants) await participant.whileScheduling?.(manager, organizationIds);
  }

  async whileRemoving(manager: EntityManager, organizationIds: readonly string[]): Promise<void> {
    if (!organizationIds.length) return;
    for (const participant of this.participants) await participant.whileRemoving?.(manager, organizationIds);
  }

  afterRemoval(organizationIds: readonly string[]): void {
    if (!organizationIds.length) return;
    for (const participant of this.participants) participant.afterRemoval?.(organizationIds);
  }
}
