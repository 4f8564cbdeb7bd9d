import { Injectable, type OnModuleInit } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import { discovered } from '../common/discovery/discovered.js';

/**
 * What a feature does when accounts stop being usable (deactivated with the organization that held
 * them, or waiting for their deletion), so the users feature changes their state without knowing
 * what other features keep of a signed-in person. A feature marks its participant, a provider of
 * its own module, with `@OnAccountsDeactivated()`; auth's ends the accounts' sessions.
 */
export interface AccountLifecycleParticipant {
  /** Inside the unit of work that takes the accounts out of use; a throw rolls the change back. */
  whileDeactivating(userIds: readonly string[]): Promise<void>;
}

/** Marks a provider as an `AccountLifecycleParticipant`: AccountLifecycleService calls it. */
export const OnAccountsDeactivated = DiscoveryService.createDecorator<void>();

/**
 * The participants in taking accounts out of use: every provider marked `@OnAccountsDeactivated()`,
 * found when this module starts, called one after the other in the order their modules were
 * registered.
 */
@Injectable()
export class AccountLifecycleService implements OnModuleInit {
  private participants: readonly AccountLifecycleParticipant[] = [];

  constructor(private readonly discovery: DiscoveryService) {}

  onModuleInit(): void {
    this.participants = discovered<AccountLifecycleParticipant, void>(this.discovery, OnAccountsDeactivated).map(
      ({ instance }) => instance,
    );
  }

  async whileDeactivating(userIds: readonly string[]): Promise<void> {
    if (!userIds.length) return;
    // Auth's participant ends the sessions: an account taken out of use must not stay signed in.
    if (!this.participants.length) throw new Error('No feature ends the sessions of deactivated accounts');
    for (const participant of this.participants) await participant.whileDeactivating(userIds);
  }
}
