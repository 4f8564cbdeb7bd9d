/* eslint-disable @typescript-eslint/require-await -- in-memory fakes answer at once, behind the repositories' promise signatures */
import { randomUUID } from 'node:crypto';
import { User } from '../../src/users/user.entity.js';
import type { NewAccount, UsersRepository } from '../../src/users/users.repository.js';

/** The public surface of a class, so a fake stays in step with it. */
export type Public<T> = { [K in keyof T]: T[K] };

/** An account as the fake keeps it: the entity's fields, password hash included. */
export type StoredUser = Pick<
  User,
  | 'id'
  | 'email'
  | 'passwordHash'
  | 'status'
  | 'emailVerifiedAt'
  | 'isSuperAdmin'
  | 'deletionRequestedAt'
  | 'lastLoginAt'
>;

function entity(row: StoredUser, withPassword: boolean): User {
  const user = Object.assign(new User(), { ...row, createdAt: new Date(0), updatedAt: new Date(0) });
  if (!withPassword) delete (user as Partial<User>).passwordHash;
  return user;
}

/** In-memory `users`: addresses unique whatever their case, as the table's index makes them. */
export class FakeUsersRepository implements Public<UsersRepository> {
  readonly rows = new Map<string, StoredUser>();
  /** Users whose rows were locked, in order. */
  readonly locked: string[] = [];

  /** An account as a test needs it: active and verified unless told otherwise. */
  add(overrides: Partial<StoredUser> & { email: string }): StoredUser {
    const row: StoredUser = {
      id: randomUUID(),
      passwordHash: '',
      status: 'active',
      emailVerifiedAt: new Date(0),
      isSuperAdmin: false,
      deletionRequestedAt: null,
      lastLoginAt: null,
      ...overrides,
    };
    this.rows.set(row.id, row);
    return row;
  }

  async insert(account: NewAccount, ifAbsent: boolean): Promise<string | null> {
    if (this.byEmail(account.email)) {
      if (ifAbsent) return null;
      throw Object.assign(new Error('duplicate key value violates unique constraint'), { code: '23505' });
    }
    return this.add({
      email: account.email,
      passwordHash: account.passwordHash,
      emailVerifiedAt: account.verified ? new Date() : null,
      isSuperAdmin: account.superAdmin ?? false,
    }).id;
  }

  async findById(userId: string): Promise<User | null> {
    const row = this.rows.get(userId);
    return row ? entity(row, false) : null;
  }

  async findByEmail(email: string, options: { withPassword?: boolean; lock?: boolean } = {}): Promise<User | null> {
    const row = this.byEmail(email);
    if (row && options.lock) this.locked.push(row.id);
    return row ? entity(row, options.withPassword ?? false) : null;
  }

  async addressOf(userId: string): Promise<string | null> {
    return this.rows.get(userId)?.email ?? null;
  }

  async isAddressTaken(email: string, exceptUserId: string): Promise<boolean> {
    const row = this.byEmail(email);
    return row !== undefined && row.id !== exceptUserId;
  }

  async lock(userId: string): Promise<void> {
    this.locked.push(userId);
  }

  async recordSignIn(userId: string): Promise<void> {
    this.update(userId, { lastLoginAt: new Date() });
  }

  async markVerified(userId: string, passwordHash?: string): Promise<void> {
    const row = this.rows.get(userId);
    if (!row) return;
    row.emailVerifiedAt = passwordHash === undefined ? (row.emailVerifiedAt ?? new Date()) : new Date();
    if (passwordHash !== undefined) row.passwordHash = passwordHash;
  }

  async setPassword(userId: string, passwordHash: string): Promise<void> {
    this.update(userId, { passwordHash });
  }

  async setAddress(userId: string, email: string): Promise<void> {
    const taken = this.byEmail(email);
    if (taken && taken.id !== userId) {
      throw Object.assign(new Error('duplicate key value violates unique constraint'), { code: '23505' });
    }
    this.update(userId, { email });
  }

  async markForDeletion(userId: string): Promise<void> {
    this.update(userId, { status: 'pending_deletion', deletionRequestedAt: new Date() });
  }

  async deactivate(userIds: readonly string[]): Promise<string[]> {
    const ids = userIds.filter((id) => {
      const row = this.rows.get(id);
      return row?.status === 'active' && !row.isSuperAdmin;
    });
    for (const id of ids) this.update(id, { status: 'disabled' });
    return ids;
  }

  async dueForDeletion(graceDays: number, limit: number): Promise<string[]> {
    const cutoff = Date.now() - graceDays * 86_400_000;
    return [...this.rows.values()]
      .filter((row) => row.status === 'pending_deletion' && row.deletionRequestedAt!.getTime() <= cutoff)
      .sort((a, b) => a.deletionRequestedAt!.getTime() - b.deletionRequestedAt!.getTime())
      .slice(0, limit)
      .map((row) => row.id);
  }

  async delete(userIds: readonly string[]): Promise<void> {
    for (const id of userIds) this.rows.delete(id);
  }

  private byEmail(email: string): StoredUser | undefined {
    return [...this.rows.values()].find((row) => row.email.toLowerCase() === email.toLowerCase());
  }

  private update(userId: string, patch: Partial<StoredUser>): void {
    const row = this.rows.get(userId);
    if (row) Object.assign(row, patch);
  }
}
