import { Injectable } from '@nestjs/common';
import { UnitOfWork } from '../database/unit-of-work.js';
import { AccountLifecycleService } from './account-lifecycle.service.js';
import type { User } from './user.entity.js';
import { UsersRepository, type NewAccount } from './users.repository.js';

export type { NewAccount } from './users.repository.js';

/**
 * The owner of the accounts: every other feature reads and changes them through here. Changes
 * run in the caller's unit of work (decision 0070); taking accounts out of use tells the
 * participants of AccountLifecycleService (auth ends their sessions) in the same one.
 */
@Injectable()
export class UsersService {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly accounts: UsersRepository,
    private readonly lifecycle: AccountLifecycleService,
  ) {}

  /** A new active account's id; a taken address (whatever its case) is a unique violation. */
  async create(account: NewAccount): Promise<string> {
    return (await this.accounts.insert(account, false))!;
  }

  /** A new active account's id, or null when the address already has an account. */
  createIfAbsent(account: NewAccount): Promise<string | null> {
    return this.accounts.insert(account, true);
  }

  findById(userId: string): Promise<User | null> {
    return this.accounts.findById(userId);
  }

  /**
   * The account of an address, whatever its case. `withPassword` adds the hash (auth's credential
   * check only); `lock` holds the row until the unit of work ends.
   */
  findByEmail(email: string, options: { withPassword?: boolean; lock?: boolean } = {}): Promise<User | null> {
    return this.accounts.findByEmail(email, options);
  }

  /** The address of the account, or null when there is none. */
  addressOf(userId: string): Promise<string | null> {
    return this.accounts.addressOf(userId);
  }

  /** Whether an account other than `exceptUserId` has the address, whatever its case. */
  isAddressTaken(email: string, exceptUserId: string): Promise<boolean> {
    return this.accounts.isAddressTaken(email, exceptUserId);
  }

  /** Holds the account's row until the unit of work ends: changes to one account go one at a time. */
  lock(userId: string): Promise<void> {
    return this.accounts.lock(userId);
  }

  recordSignIn(userId: string): Promise<void> {
    return this.accounts.recordSignIn(userId);
  }

  /** The address is confirmed (kept when it already was); `passwordHash` replaces the password too. */
  markVerified(userId: string, passwordHash?: string): Promise<void> {
    return this.accounts.markVerified(userId, passwordHash);
  }

  setPassword(userId: string, passwordHash: string): Promise<void> {
    return this.accounts.setPassword(userId, passwordHash);
  }

  /** A taken address is a unique violation, for the caller to answer. */
  setAddress(userId: string, email: string): Promise<void> {
    return this.accounts.setAddress(userId, email);
  }

  /**
   * The account can no longer sign in and waits for its deletion (`dueForDeletion`); its sessions
   * end in the same unit of work.
   */
  async markForDeletion(userId: string): Promise<void> {
    await this.uow.run(async () => {
      await this.accounts.markForDeletion(userId);
      await this.lifecycle.whileDeactivating([userId]);
    });
  }

  /**
   * Disables those of the accounts that are active and not service administrators, and ends their
   * sessions in the same unit of work; answers the ids it disabled.
   */
  async deactivate(userIds: readonly string[]): Promise<string[]> {
    if (!userIds.length) return [];
    return this.uow.run(async () => {
      const ids = await this.accounts.deactivate(userIds);
      await this.lifecycle.whileDeactivating(ids);
      return ids;
    });
  }

  /**
   * Up to `limit` accounts whose deletion was requested at least `graceDays` ago, oldest request
   * first, locked for the unit of work (rows another instance holds are skipped).
   */
  dueForDeletion(graceDays: number, limit: number): Promise<string[]> {
    return this.accounts.dueForDeletion(graceDays, limit);
  }

  /** Deletes the accounts; what they own in other tables cascades. */
  async delete(userIds: readonly string[]): Promise<void> {
    if (!userIds.length) return;
    await this.accounts.delete(userIds);
  }
}
