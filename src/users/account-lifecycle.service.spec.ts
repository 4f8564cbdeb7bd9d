import { describe, expect, it } from '@jest/globals';
import { fakeDiscovery } from '../../test/harness/fake-discovery.js';
import {
  AccountLifecycleService,
  OnAccountsDeactivated,
  type AccountLifecycleParticipant,
} from './account-lifecycle.service.js';

function lifecycleOf(...participants: object[]): AccountLifecycleService {
  const lifecycle = new AccountLifecycleService(fakeDiscovery(() => participants));
  lifecycle.onModuleInit();
  return lifecycle;
}

describe('AccountLifecycleService', () => {
  it('refuses to take accounts out of use while no feature would sign them out', async () => {
    await expect(lifecycleOf().whileDeactivating(['u1'])).rejects.toThrow(
      'No feature ends the sessions of deactivated accounts',
    );
  });

  it('tells every participant marked @OnAccountsDeactivated, in order, and nobody for no accounts', async () => {
    const calls: string[] = [];
    @OnAccountsDeactivated()
    class Sessions implements AccountLifecycleParticipant {
      whileDeactivating(ids: readonly string[]) {
        return Promise.resolve(void calls.push(`a:${ids.join()}`));
      }
    }
    @OnAccountsDeactivated()
    class Keys implements AccountLifecycleParticipant {
      whileDeactivating(ids: readonly string[]) {
        return Promise.resolve(void calls.push(`b:${ids.join()}`));
      }
    }
    class Unmarked implements AccountLifecycleParticipant {
      whileDeactivating() {
        return Promise.resolve(void calls.push('unmarked'));
      }
    }
    const lifecycle = lifecycleOf(new Sessions(), new Unmarked(), new Keys());
    await lifecycle.whileDeactivating(['u1', 'u2']);
    await lifecycle.whileDeactivating([]);
    expect(calls).toEqual(['a:u1,u2', 'b:u1,u2']);
  });
});
