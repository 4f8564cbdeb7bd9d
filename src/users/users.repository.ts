import { Injectable } from '@nestjs/common';
import { queryRows } from '../database/sql.js';
import { UnitOfWork } from '../database/unit-of-work.js';
import { User } from './user.entity.js';

/** An account as created: by sign-up (unverified), by single sign-on or by the operator (verified). */
export interface NewAccount {
  email: string;
  passwordHash: string;
  verified?: boolean;
  superAdmin?: boolean;
}

/**
 * The owner of the `users` table (decision 0070). Statements run in the open unit of work.
 */
@Injectable()
export class UsersRepository {
  constructor(private readonly uow: UnitOfWork) {}

  /** A new active account's id; null when `ifAbsent` and the address (whatever its case) has one. */
  async insert(account: NewAccount, ifAbsent: boolean): Promise<string | null> {
    const [row] = await queryRows<{ id: string }>(
      this.uow.manager(),
      `INSERT INTO users (email, password_hash, status, email_verified_at, is_super_admin)
       VALUES ($1, $2, 'active', CASE WHEN $3::boolean THEN now() END, $4)
       ${ifAbsent ? 'ON CONFLICT ((lower(email))) DO NOTHING' : ''} RETURNING id`,
      [account.email, account.passwordHash, account.verified ?? false, account.superAdmin ?? false],
    );
    return row?.id ?? null;
  }

  findById(userId: string): Promise<User | null> {
    return this.uow.manager().getRepository(User).findOneBy({ id: userId });
  }

  /** The account of an address, whatever its case; `withPassword` adds the hash, `lock` holds the row. */
  findByEmail(email: string, options: { withPassword?: boolean; lock?: boolean } = {}): Promise<User | null> {
    let query = this.uow
      .manager()
      .getRepository(User)
      .createQueryBuilder('u')
      .where('lower(u.email) = lower(:email)', { email });
    if (options.withPassword) query = query.addSelect('u.passwordHash');
    if (options.lock) query = query.setLock('pessimistic_write');
    return query.getOne();
  }

  async addressOf(userId: string): Promise<string | null> {
    const [row] = await queryRows<{ email: string }>(this.uow.manager(), `SELECT email FROM users WHERE id = $1`, [
      userId,
    ]);
    return row?.email ?? null;
  }

  async isAddressTaken(email: string, exceptUserId: string): Promise<boolean> {
    const rows = await queryRows<{ one: number }>(
      this.uow.manager(),
      `SELECT 1 AS one FROM users WHERE lower(email) = lower($1) AND id <> $2`,
      [email, exceptUserId],
    );
    return rows.length > 0;
  }

  async lock(userId: string): Promise<void> {
    await this.uow.manager().query(`SELECT 1 FROM users WHERE id = $1 FOR UPDATE`, [userId]);
  }

  async recordSignIn(userId: string): Promise<void> {
    await this.uow.manager().query(`UPDATE users SET last_login_at = now() WHERE id = $1`, [userId]);
  }

  /** Confirms the address (kept when it already was); `passwordHash` replaces the password too. */
  async markVerified(userId: string, passwordHash?: string): Promise<void> {
    if (passwordHash === undefined) {
      await this.uow
        .manager()
        .query(
          `UPDATE users SET email_verified_at = COALESCE(email_verified_at, now()), updated_at = now() WHERE id = $1`,
          [userId],
        );
      return;
    }
    await this.uow
      .manager()
      .query(`UPDATE users SET email_verified_at = now(), password_hash = $2, updated_at = now() WHERE id = $1`, [
        userId,
        passwordHash,
      ]);
  }

  async setPassword(userId: string, passwordHash: string): Promise<void> {
    await this.uow
      .manager()
      .query(`UPDATE users SET password_hash = $2, updated_at = now() WHERE id = $1`, [userId, passwordHash]);
  }

  /** A taken address is a unique violation, for the caller to answer. */
  async setAddress(userId: string, email: string): Promise<void> {
    await this.uow.manager().query(`UPDATE users SET email = $2, updated_at = now() WHERE id = $1`, [userId, email]);
  }

  async markForDeletion(userId: string): Promise<void> {
    await this.uow
      .manager()
      .query(
        `UPDATE users SET status = 'pending_deletion', deletion_requested_at = now(), updated_at = now() WHERE id = $1`,
        [userId],
      );
  }

  /** Disables those of the accounts that are active and not service administrators; their ids. */
  async deactivate(userIds: readonly string[]): Promise<string[]> {
    const rows = await queryRows<{ id: string }>(
      this.uow.manager(),
      `UPDATE users SET status = 'disabled', updated_at = now()
        WHERE id = ANY($1::uuid[]) AND status = 'active' AND NOT is_super_admin
      RETURNING id`,
      [userIds],
    );
    return rows.map((row) => row.id);
  }

  /** Accounts whose deletion was requested `graceDays` ago or more, oldest first, locked (others' skipped). */
  async dueForDeletion(graceDays: number, limit: number): Promise<string[]> {
    const rows = await queryRows<{ id: string }>(
      this.uow.manager(),
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
  async delete(userIds: readonly string[]): Promise<void> {
    await this.uow.manager().query(`DELETE FROM users WHERE id = ANY($1::uuid[])`, [userIds]);
  }
}
