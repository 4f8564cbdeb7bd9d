import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { UnitOfWork } from '../database/unit-of-work.js';
import { AccountLifecycleService } from './account-lifecycle.service.js';
import type { User } from './user.entity.js';
import { UsersRepository, type NewAccount } from './users.repository.js';

export type { NewAccount } from './users.repository.js';

/** A hand-made transaction of a caller not yet moved to a unit of work (deprecated forms only). */
type HandMadeTransaction = EntityManager;

const isTransaction = (value: unknown): value is HandMadeTransaction =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The owner of the accounts: every other feature reads and changes them through here. Changes
 * run in the caller's unit of work (decision 0070); taking accounts out of use tells the
 * participants of AccountLifecycleService (auth ends their sessions) in the same one.
 *
 * The forms that take a leading `EntityManager` are deprecated: they serve the organization
 * group's callers that still open their transaction by hand, and go when those pass none.
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
  findByEmail(
    email: string,
    options: {
      withPassword?: boolean;
      lock?: boolean;
      /** @deprecated pass no manager: run in a unit of work. */
      manager?: HandMadeTransaction;
    } = {},
  ): Promise<User | null> {
    const { manager, ...read } = options;
    return this.accounts.findByEmail(email, read, manager);
  }

  /** The address of the account, or null when there is none. */
  addressOf(userId: string, manager?: HandMadeTransaction): Promise<string | null> {
    return this.accounts.addressOf(userId, manager);
  }

  /** Whether an account other than `exceptUserId` has the address, whatever its case. */
  isAddressTaken(email: string, exceptUserId: string): Promise<boolean> {
    return this.accounts.isAddressTaken(email, exceptUserId);
  }

  /** Holds the account's row until the unit of work ends: changes to one account go one at a time. */
  lock(userId: string): Promise<void>;
  /** @deprecated pass no manager: run in a unit of work. */
  lock(manager: HandMadeTransaction, userId: string): Promise<void>;
  lock(first: string | HandMadeTransaction, userId?: string): Promise<void> {
    return isTransaction(first) ? this.accounts.lock(userId!, first) : this.accounts.lock(first);
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
  markForDeletion(userId: string): Promise<void>;
  /** @deprecated pass no manager: run in a unit of work. */
  markForDeletion(manager: HandMadeTransaction, userId: string): Promise<void>;
  async markForDeletion(first: string | HandMadeTransaction, userId?: string): Promise<void> {
    const manager = isTransaction(first) ? first : undefined;
    const id = isTransaction(first) ? userId! : first;
    await this.uow.run(async () => {
      await this.accounts.markForDeletion(id, manager);
      await this.lifecycle.whileDeactivating([id]);
    });
  }

  /**
   * Disables those of the accounts that are active and not service administrators, and ends their
   * sessions in the same unit of work; answers the ids it disabled.
   */
  deactivate(userIds: readonly string[]): Promise<string[]>;
  /** @deprecated pass no manager: run in a unit of work. */
  deactivate(manager: HandMadeTransaction, userIds: readonly string[]): Promise<string[]>;
  async deactivate(first: readonly string[] | HandMadeTransaction, more?: readonly string[]): Promise<string[]> {
    const manager = isTransaction(first) ? first : undefined;
    const userIds = isTransaction(first) ? more! : first;
    if (!userIds.length) return [];
    return this.uow.run(async () => {
      const ids = await this.accounts.deactivate(userIds, manager);
      await this.lifecycle.whileDeactivating(ids);
      return ids;
    });
  }

  /**
   * Up to `limit` accounts whose deletion was requested at least `graceDays` ago, oldest request
   * first, locked for the unit of work (rows another instance holds are skipped).
   */
  dueForDeletion(graceDays: number, limit: number): Promise<string[]>;
  /** @deprecated pass no manager: run in a unit of work. */
  dueForDeletion(manager: HandMadeTransaction, graceDays: number, limit: number): Promise<string[]>;
  dueForDeletion(first: number | HandMadeTransaction, second: number, third?: number): Promise<string[]> {
    return isTransaction(first)
      ? this.accounts.dueForDeletion(second, third!, first)
      : this.accounts.dueForDeletion(first, second);
  }

  /** Deletes the accounts; what they own in other tables cascades. */
  delete(userIds: readonly string[]): Promise<void>;
  /** @deprecated pass no manager: run in a unit of work. */
  delete(manager: HandMadeTransaction, userIds: readonly string[]): Promise<void>;
  async delete(first: readonly string[] | HandMadeTransaction, more?: readonly string[]): Promise<void> {
    const userIds = isTransaction(first) ? more! : first;
    if (!userIds.length) return;
    await this.accounts.delete(userIds, isTransaction(first) ? first : undefined);
  }
}
