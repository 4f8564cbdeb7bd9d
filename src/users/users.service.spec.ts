import { beforeEach, describe, expect, it } from '@jest/globals';
import { FakeUnitOfWork } from '../../test/fakes/unit-of-work.js';
import { FakeUsersRepository } from '../../test/fakes/users.js';
import { fakeDiscovery } from '../../test/harness/fake-discovery.js';
import {
  AccountLifecycleService,
  OnAccountsDeactivated,
  type AccountLifecycleParticipant,
} from './account-lifecycle.service.js';
import type { UsersRepository } from './users.repository.js';
import { UsersService } from './users.service.js';

describe('UsersService (account states, on fakes)', () => {
  let uow: FakeUnitOfWork;
  let accounts: FakeUsersRepository;
  let signedOut: { ids: string[]; inUnitOfWork: boolean }[];
  let users: UsersService;

  beforeEach(() => {
    uow = new FakeUnitOfWork();
    accounts = new FakeUsersRepository();
    signedOut = [];
    @OnAccountsDeactivated()
    class SignOut implements AccountLifecycleParticipant {
      whileDeactivating(ids: readonly string[]) {
        return Promise.resolve(void signedOut.push({ ids: [...ids], inUnitOfWork: uow.active }));
      }
    }
    const lifecycle = new AccountLifecycleService(fakeDiscovery(() => [new SignOut()]));
    lifecycle.onModuleInit();
    users = new UsersService(uow.asUnitOfWork(), accounts as unknown as UsersRepository, lifecycle);
  });

  it('creates one account per address whatever its case: createIfAbsent answers null for a taken one', async () => {
    const id = await users.createIfAbsent({ email: 'Ann@Example.com', passwordHash: 'h' });
    expect(id).not.toBeNull();
    expect(await users.createIfAbsent({ email: 'ann@example.COM', passwordHash: 'h' })).toBeNull();
    await expect(users.create({ email: 'ANN@example.com', passwordHash: 'h' })).rejects.toMatchObject({
      code: '23505',
    });
    expect((await users.findById(id!))?.emailVerifiedAt).toBeNull();
    expect((await users.findById(id!))?.isActive).toBe(false);
  });

  it('keeps the password hash to the credential check', async () => {
    accounts.add({ email: 'a@example.com', passwordHash: 'secret-hash' });
    expect((await users.findByEmail('A@example.com'))?.passwordHash).toBeUndefined();
    expect((await users.findByEmail('a@example.com', { withPassword: true }))?.passwordHash).toBe('secret-hash');
  });

  it('disables only active accounts that are not service administrators, and signs them out in the same unit of work', async () => {
    const active = accounts.add({ email: 'active@example.com' });
    const admin = accounts.add({ email: 'admin@example.com', isSuperAdmin: true });
    const suspended = accounts.add({ email: 'suspended@example.com', status: 'suspended' });
    expect(await users.deactivate([active.id, admin.id, suspended.id])).toEqual([active.id]);
    expect(accounts.rows.get(active.id)?.status).toBe('disabled');
    expect(accounts.rows.get(admin.id)?.status).toBe('active');
    expect(accounts.rows.get(suspended.id)?.status).toBe('suspended');
    expect(signedOut).toEqual([{ ids: [active.id], inUnitOfWork: true }]);
    expect(uow.committed).toBe(1);
  });

  it('does nothing, and tells nobody, for no accounts', async () => {
    expect(await users.deactivate([])).toEqual([]);
    expect(signedOut).toEqual([]);
  });

  it('marks an account for deletion: it cannot sign in, is signed out, and is due once the grace has passed', async () => {
    const user = accounts.add({ email: 'leaving@example.com' });
    await users.markForDeletion(user.id);
    expect(accounts.rows.get(user.id)).toMatchObject({ status: 'pending_deletion' });
    expect((await users.findById(user.id))?.isActive).toBe(false);
    expect(signedOut).toEqual([{ ids: [user.id], inUnitOfWork: true }]);
    expect(await users.dueForDeletion(30, 10)).toEqual([]);
    accounts.rows.get(user.id)!.deletionRequestedAt = new Date(Date.now() - 31 * 86_400_000);
    expect(await users.dueForDeletion(30, 10)).toEqual([user.id]);
    await users.delete([user.id]);
    expect(await users.findById(user.id)).toBeNull();
  });

  it('confirms an address once, and replaces the password when single sign-on takes an unconfirmed account over', async () => {
    const user = accounts.add({ email: 'new@example.com', emailVerifiedAt: null, passwordHash: 'chosen' });
    await users.markVerified(user.id);
    const confirmedAt = accounts.rows.get(user.id)!.emailVerifiedAt;
    expect(confirmedAt).not.toBeNull();
    await users.markVerified(user.id);
    expect(accounts.rows.get(user.id)!.emailVerifiedAt).toBe(confirmedAt);
    await users.markVerified(user.id, 'unusable');
    expect(accounts.rows.get(user.id)!.passwordHash).toBe('unusable');
  });

  it('tells whether another account has an address, whatever its case', async () => {
    const ann = accounts.add({ email: 'ann@example.com' });
    const bob = accounts.add({ email: 'bob@example.com' });
    expect(await users.isAddressTaken('ANN@example.com', bob.id)).toBe(true);
    expect(await users.isAddressTaken('ann@example.com', ann.id)).toBe(false);
  });
});
