import { describe, expect, it } from '@jest/globals';
import type { AppConfig } from '../config/app-config.js';
import { trustAppId } from '../common/access/tenant-id.js';
import type { FlagStoreRepository, StoredFlagSet } from './flag-store.repository.js';
import { FlagStore, overridesOf } from './flag-store.js';

const CONFIG = { logLevel: 'silent', flagStoreMaxApps: 5 } as AppConfig;
const app = (id: string) => trustAppId(id);

/** The store's read model answering `load`; its listener never connects. */
function readModel(load: (appId: string) => Promise<StoredFlagSet>): FlagStoreRepository {
  const listener = { start: () => Promise.resolve(), close: () => Promise.resolve() };
  return { load, listener: () => listener } as unknown as FlagStoreRepository;
}

/** One flag per app; counts the loads per app. */
function countingDatabase() {
  const loads = new Map<string, number>();
  const load = (appId: string): Promise<StoredFlagSet> => {
    loads.set(appId, (loads.get(appId) ?? 0) + 1);
    const off = { enabled: false, value: 'false', rules: [] };
    return Promise.resolve({
      flags: [
        {
          id: `${appId}-flag`,
          key: 'checkout',
          valueType: 'boolean',
          defaultValue: 'false',
          environments: { production: { enabled: true, value: 'true', rules: [] }, staging: off, development: off },
        },
      ],
      overrides: [],
    });
  };
  return { load, loads };
}

function storeOf(maxApps: number) {
  const { load, loads } = countingDatabase();
  const store = new FlagStore(readModel(load), { ...CONFIG, flagStoreMaxApps: maxApps });
  return { store, loads };
}

describe('FlagStore memory bound', () => {
  it('holds at most FLAG_STORE_MAX_APPS apps, dropping the least recently asked', async () => {
    const { store, loads } = storeOf(2);
    await store.get(app('a'));
    await store.get(app('b'));
    await store.get(app('a')); // a is now the most recent: b goes first
    await store.get(app('c'));
    expect(store.size).toBe(2);
    await store.get(app('a'));
    await store.get(app('c'));
    expect([loads.get('a'), loads.get('c')]).toEqual([1, 1]);
    await store.get(app('b'));
    expect(loads.get('b')).toBe(2);
  });

  it('serves a dropped app the same flags once loaded again', async () => {
    const { store } = storeOf(1);
    const first = await store.get(app('a'));
    await store.get(app('b'));
    const again = await store.get(app('a'));
    expect(again).not.toBe(first);
    expect(again.flags.map((flag) => [flag.key, flag.environments.production.value.raw])).toEqual([
      ['checkout', 'true'],
    ]);
  });

  it('asks the database again for an app whose load failed', async () => {
    const { load } = countingDatabase();
    let fail = true;
    const store = new FlagStore(
      readModel((appId) => (fail ? Promise.reject(new Error('database unavailable')) : load(appId))),
      CONFIG,
    );
    await expect(store.get(app('a'))).rejects.toThrow('database unavailable');
    fail = false;
    expect((await store.get(app('a'))).flags).toHaveLength(1);
  });
});

describe('FlagStore overrides', () => {
  it('indexes overrides by device, so a request reads its own device’s only, newest first', async () => {
    const { load } = countingDatabase();
    const overrides = [
      { flagId: 'a-flag', deviceKeyId: 'device-1', forcedValue: 'true', expiresAt: null },
      { flagId: 'a-flag', deviceKeyId: 'device-2', forcedValue: 'false', expiresAt: null },
      { flagId: 'a-flag', deviceKeyId: 'device-1', forcedValue: 'false', expiresAt: null },
      // A flood of another device's overrides is not what device-1's requests look through.
      ...Array.from({ length: 1000 }, (_, i) => ({
        flagId: 'a-flag',
        deviceKeyId: `other-${i}`,
        forcedValue: 'true',
        expiresAt: null,
      })),
    ];
    const store = new FlagStore(
      readModel(async (appId) => ({ ...(await load(appId)), overrides })),
      CONFIG,
    );
    const set = await store.get(app('a'));
    expect(
      overridesOf(set, 'device-1')
        .get('a-flag')
        ?.map((override) => override.forcedValue),
    ).toEqual(['true', 'false']);
    expect(overridesOf(set, 'device-2').get('a-flag')).toHaveLength(1);
    expect(overridesOf(set, 'device-3').size).toBe(0);
    expect(overridesOf(set, null).size).toBe(0);
  });
});
