import { describe, expect, it } from '@jest/globals';
import type { EntityManager } from 'typeorm';
import { AccountLifecycleService } from './account-lifecycle.service.js';

const manager = {} as EntityManager;

describe('AccountLifecycleService', () => {
  it('refuses to take accounts out of use while no feature would sign them out', async () => {
    await expect(new AccountLifecycleService().whileDeactivating(manager, ['u1'])).rejects.toThrow(
      'No feature ends the sessions of deactivated accounts',
    );
  });

  it('tells every participant, in the order they registered, in the caller’s transaction', async () => {
    const lifecycle = new AccountLifecycleService();
    const calls: string[] = [];
    lifecycle.register({
      whileDeactivating: (m, ids) => Promise.resolve(void calls.push(`a:${m === manager}:${ids.join()}`)),
    });
    lifecycle.register({ whileDeactivating: (_m, ids) => Promise.resolve(void calls.push(`b:${ids.join()}`)) });
    await lifecycle.whileDeactivating(manager, ['u1', 'u2']);
    await lifecycle.whileDeactivating(manager, []);
    expect(calls).toEqual(['a:true:u1,u2', 'b:u1,u2']);
  });
});
