import { Injectable } from '@nestjs/common';

/**
 * What a feature does when accounts stop being usable (deactivated with the organization that held
 * them, or waiting for their deletion), so the users feature changes their state without knowing
 * what other features keep of a signed-in person. A feature registers its participant when its
 * module starts (`AccountLifecycleService.register`); auth ends the accounts' sessions.
 */
export interface AccountLifecycleParticipant {
  /** Inside the unit of work that takes the accounts out of use; a throw rolls the change back. */
  whileDeactivating(userIds: readonly string[]): Promise<void>;
}

/** The participants in taking accounts out of use, called in the order they registered. */
@Injectable()
export class AccountLifecycleService {
  private readonly participants: AccountLifecycleParticipant[] = [];

  register(participant: AccountLifecycleParticipant): void {
    this.participants.push(participant);
  }

  async whileDeactivating(userIds: readonly string[]): Promise<void> {
    if (!userIds.length) return;
    // Auth registers as its module starts: an account taken out of use must not stay signed in.
    if (!this.participants.length) throw new Error('No feature ends the sessions of deactivated accounts');
    for (const participant of this.participants) await participant.whileDeactivating(userIds);
  }
}
