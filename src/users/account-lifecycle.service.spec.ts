import { describe, expect, it } from '@jest/globals';
import { AccountLifecycleService } from './account-lifecycle.service.js';

describe('AccountLifecycleService', () => {
  it('refuses to take accounts out of use while no feature would sign them out', async () => {
    await expect(new AccountLifecycleService().whileDeactivating(['u1'])).rejects.toThrow(
      'No feature ends the sessions of deactivated accounts',
    );
  });

  it('tells every participant, in the order they registered, and nobody for no accounts', async () => {
    const lifecycle = new AccountLifecycleService();
    const calls: string[] = [];
    lifecycle.register({ whileDeactivating: (ids) => Promise.resolve(void calls.push(`a:${ids.join()}`)) });
    lifecycle.register({ whileDeactivating: (ids) => Promise.resolve(void calls.push(`b:${ids.join()}`)) });
    await lifecycle.whileDeactivating(['u1', 'u2']);
    await lifecycle.whileDeactivating([]);
    expect(calls).toEqual(['a:u1,u2', 'b:u1,u2']);
  });
});
