import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';
import { queryRows, sqlIdentifier } from '../database/sql.js';
import { AccountLifecycleService } from './account-lifecycle.service.js';
import { User } from './user.entity.js';

/**
 * The accounts as a row source of another feature's query (FROM or JOIN), for the reads that stay
 * one round trip (the session behind a cookie, a key's creator, members with their addresses):
 * `users` under `alias`, exposing only `id`, `email`, `status`, `email_verified_at` and
 * `is_super_admin`. PostgreSQL flattens the sub-select, so `alias.id = …` still uses the key. The
 * password hash never leaves this feature except to auth's credential check (`findByEmail`).
 */
export function usersFrom(alias: string): string {
  return `(SELECT id, email, status, email_verified_at, is_super_admin FROM users) ${sqlIdentifier(alias)}`;
}

/** An account as created: by sign-up (unverified), by single sign-on or by the operator (verified). */
export interface NewAccount {
  email: string;
  passwordHash: string;
  verified?: boolean;
  superAdmin?: boolean;
}

/**
 * The owner of the `users` table: every other feature reads and changes accounts through here.
 * Writes that belong to a larger change take the caller's transaction (`manager`) first.
 */
@Injectable()
export class UsersService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly lifecycle: AccountLifecycleService,
  ) {}

  /** A new active account's id; a taken address (whatever its case) is a unique violation. */
  async create(manager: EntityManager, account: NewAccount): Promise<string> {
    const [row] = await this.insert(manager, account, '');
    return row.id;
  }

  /** A new active account's id, or null when the address already has an account. */
  async createIfAbsent(manager: EntityManager, account: NewAccount): Promise<string | null> {
    const [row] = await this.insert(manager, account, 'ON CONFLICT ((lower(email))) DO NOTHING');
    return row?.id ?? null;
  }

  async findById(userId: string, manager: EntityManager = this.dataSource.manager): Promise<User | null> {
    return manager.getRepository(User).findOneBy({ id: userId });
  }

  /**
   * The account of an address, whatever its case. `withPassword` adds the hash (auth's credential
   * check only); `lock` holds the row until the transaction of `manager` ends.
   */
  async findByEmail(
    email: string,
    options: { manager?: EntityManager; withPassword?: boolean; lock?: boolean } = {},
  ): Promise<User | null> {
    let query = (options.manager ?? this.dataSource.manager)
      .getRepository(User)
      .createQueryBuilder('u')
      .where('lower(u.email) = lower(:email)', { email });
    if (options.withPassword) query = query.addSelect('u.passwordHash');
    if (options.lock) query = query.setLock('pessimistic_write');
    return query.getOne();
  }

  /** The address of the account, or null when there is none. */
  async addressOf(userId: string, manager: EntityManager = this.dataSource.manager): Promise<string | null> {
    const [row] = await manager.query<{ email: string }[]>(`SELECT email FROM users WHERE id = $1`, [userId]);
    return row?.email ?? null;
  }

  /** Whether an account other than `exceptUserId` has the address, whatever its case. */
  async isAddressTaken(manager: EntityManager, email: string, exceptUserId: string): Promise<boolean> {
    const rows: unknown[] = await manager.query(`SELECT 1 FROM users WHERE lower(email) = lower($1) AND id <> $2`, [
      email,
      exceptUserId,
    ]);
    return rows.length > 0;
  }

  /** Holds the account's row until the transaction ends: changes to one account go one at a time. */
  async lock(manager: EntityManager, userId: string): Promise<void> {
    await manager.query(`SELECT 1 FROM users WHERE id = $1 FOR UPDATE`, [userId]);
  }

  async recordSignIn(userId: string, manager: EntityManager = this.dataSource.manager): Promise<void> {
    await manager.query(`UPDATE users SET last_login_at = now() WHERE id = $1`, [userId]);
  }

  /** The address is confirmed (kept when it already was); `passwordHash` replaces the password too. */
  async markVerified(manager: EntityManager, userId: string, passwordHash?: string): Promise<void> {
    if (passwordHash === undefined) {
      await manager.query(
        `UPDATE users SET email_verified_at = COALESCE(email_verified_at, now()), updated_at = now() WHERE id = $1`,
        [userId],
      );
      return;
    }
    await manager.query(
      `UPDATE users SET email_verified_at = now(), password_hash = $2, updated_at = now() WHERE id = $1`,
      [userId, passwordHash],
    );
  }

  async setPassword(manager: EntityManager, userId: string, passwordHash: string): Promise<void> {
    await manager.query(`UPDATE users SET password_hash = $2, updated_at = now() WHERE id = $1`, [
      userId,
      passwordHash,
    ]);
  }

  /** A taken address is a unique violation, for the caller to answer. */
  async setAddress(manager: EntityManager, userId: string, email: string): Promise<void> {
    await manager.query(`UPDATE users SET email = $2, updated_at = now() WHERE id = $1`, [userId, email]);
  }

  /**
   * The account can no longer sign in and waits for its deletion (`dueForDeletion`); its sessions
   * end with this transaction.
   */
  async markForDeletion(manager: EntityManager, userId: string): Promise<void> {
    await manager.query(
      `UPDATE users SET status = 'pending_deletion', deletion_requested_at = now(), updated_at = now() WHERE id = $1`,
      [userId],
    );
    await this.lifecycle.whileDeactivating(manager, [userId]);
  }

  /**
   * Disables those of the accounts that are active and not service administrators, and ends their
   * sessions with this transaction; answers the ids it disabled.
   */
  async deactivate(manager: EntityManager, userIds: readonly string[]): Promise<string[]> {
    if (!userIds.length) return [];
    const rows = await queryRows<{ id: string }>(
      manager,
      `UPDATE users SET status = 'disabled', updated_at = now()
        WHERE id = ANY($1::uuid[]) AND status = 'active' AND NOT is_super_admin
      RETURNING id`,
      [userIds],
    );
    const ids = rows.map((row) => row.id);
    await this.lifecycle.whileDeactivating(manager, ids);
    return ids;
  }

  /**
   * Up to `limit` accounts whose deletion was requested at least `graceDays` ago, oldest request
   * first, locked for the caller's transaction (rows another instance holds are skipped).
   */
  async dueForDeletion(manager: EntityManager, graceDays: number, limit: number): Promise<string[]> {
    const rows: { id: string }[] = await manager.query(
      `SELECT id FROM users
        WHERE status = 'pending_deletion'
          AND deletion_requested_at <= now() - make_interval(days => $1)
        ORDER BY deletion_requested_at
        LIMIT $2
          FOR UPDATE SKIP LOCKED`,
      [graceDays, limit],
    );
    return rows.map((row) => row.id);
  }

  /** Deletes the accounts; what they own in other tables cascades. */
  async delete(manager: EntityManager, userIds: readonly string[]): Promise<void> {
    if (!userIds.length) return;
    await manager.query(`DELETE FROM users WHERE id = ANY($1::uuid[])`, [userIds]);
  }

  private insert(
    manager: EntityManager,
    account: NewAccount,
    onConflict: '' | 'ON CONFLICT ((lower(email))) DO NOTHING',
  ) {
    return queryRows<{ id: string }>(
      manager,
      `INSERT INTO users (email, password_hash, status, email_verified_at, is_super_admin)
       VALUES ($1, $2, 'active', CASE WHEN $3::boolean THEN now() END, $4) ${onConflict} RETURNING id`,
      [account.email, account.passwordHash, account.verified ?? false, account.superAdmin ?? false],
    );
  }
}
