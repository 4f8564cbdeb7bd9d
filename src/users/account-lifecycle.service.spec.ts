import { describe, expect, it } from '@jest/globals';
import type { EntityManager } from 'typeorm';
import { fakeDiscovery } from '../../test/harness/fake-discovery.js';
import {
  AccountLifecycleService,
  OnAccountsDeactivated,
  type AccountLifecycleParticipant,
} from './account-lifecycle.service.js';

const manager = {} as EntityManager;

function lifecycleOf(...participants: object[]): AccountLifecycleService {
  const lifecycle = new AccountLifecycleService(fakeDiscovery(() => participants));
  lifecycle.onModuleInit();
  return lifecycle;
}

describe('AccountLifecycleService', () => {
  it('refuses to take accounts out of use while no feature would sign them out', async () => {
    await expect(lifecycleOf().whileDeactivating(manager, ['u1'])).rejects.toThrow(
      'No feature ends the sessions of deactivated accounts',
    );
  });

  it('tells every participant marked @OnAccountsDeactivated, in order, in the caller’s transaction', async () => {
    const calls: string[] = [];
    @OnAccountsDeactivated()
    class Sessions implements AccountLifecycleParticipant {
      whileDeactivating(m: EntityManager, ids: readonly string[]) {
        return Promise.resolve(void calls.push(`a:${m === manager}:${ids.join()}`));
      }
    }
    @OnAccountsDeactivated()
    class Keys implements AccountLifecycleParticipant {
      whileDeactivating(_m: EntityManager, ids: readonly string[]) {
        return Promise.resolve(void calls.push(`b:${ids.join()}`));
      }
    }
    class Unmarked implements AccountLifecycleParticipant {
      whileDeactivating() {
        return Promise.resolve(void calls.push('unmarked'));
      }
    }
    const lifecycle = lifecycleOf(new Sessions(), new Unmarked(), new Keys());
    await lifecycle.whileDeactivating(manager, ['u1', 'u2']);
    await lifecycle.whileDeactivating(manager, []);
    expect(calls).toEqual(['a:true:u1,u2', 'b:u1,u2']);
  });
});
