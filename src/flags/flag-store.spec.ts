import { describe, expect, it } from '@jest/globals';
import type { DataSource } from 'typeorm';
import type { AppConfig } from '../config/app-config.js';
import { FlagStore, overridesOf } from './flag-store.js';

/** Answers the store's two statements (an app's flags, its overrides) and counts the flag loads per app. */
function countingDatabase() {
  const loads = new Map<string, number>();
  const dataSource = {
    options: { url: undefined },
    query: (sql: string, [appId]: [string]): Promise<unknown[]> => {
      if (/feature_flag_overrides/.test(sql)) return Promise.resolve([]);
      loads.set(appId, (loads.get(appId) ?? 0) + 1);
      const off = { enabled: false, value: 'false', rules: [] };
      return Promise.resolve([
        {
          id: `${appId}-flag`,
          key: 'checkout',
          value_type: 'boolean',
          default_value: 'false',
          environments: { production: { enabled: true, value: 'true', rules: [] }, staging: off, development: off },
        },
      ]);
    },
  };
  return { dataSource: dataSource as unknown as DataSource, loads };
}

function storeOf(maxApps: number) {
  const { dataSource, loads } = countingDatabase();
  const store = new FlagStore(dataSource, { logLevel: 'silent', flagStoreMaxApps: maxApps } as AppConfig);
  return { store, loads };
}

describe('FlagStore memory bound', () => {
  it('holds at most FLAG_STORE_MAX_APPS apps, dropping the least recently asked', async () => {
    const { store, loads } = storeOf(2);
    await store.get('a');
    await store.get('b');
    await store.get('a'); // a is now the most recent: b goes first
    await store.get('c');
    expect(store.size).toBe(2);
    await store.get('a');
    await store.get('c');
    expect([loads.get('a'), loads.get('c')]).toEqual([1, 1]);
    await store.get('b');
    expect(loads.get('b')).toBe(2);
  });

  it('serves a dropped app the same flags once loaded again', async () => {
    const { store } = storeOf(1);
    const first = await store.get('a');
    await store.get('b');
    const again = await store.get('a');
    expect(again).not.toBe(first);
    expect(again.flags.map((flag) => [flag.key, flag.environments.production.value.raw])).toEqual([
      ['checkout', 'true'],
    ]);
  });

  it('asks the database again for an app whose load failed', async () => {
    const { dataSource } = countingDatabase();
    const answer = (sql: string, params: unknown[]): Promise<unknown> => dataSource.query(sql, params);
    let fail = true;
    const flaky = {
      options: { url: undefined },
      query: (sql: string, params: unknown[]): Promise<unknown> =>
        fail ? Promise.reject(new Error('database unavailable')) : answer(sql, params),
    };
    const store = new FlagStore(
      flaky as unknown as DataSource,
      { logLevel: 'silent', flagStoreMaxApps: 5 } as AppConfig,
    );
    await expect(store.get('a')).rejects.toThrow('database unavailable');
    fail = false;
    expect((await store.get('a')).flags).toHaveLength(1);
  });
});

describe('FlagStore overrides', () => {
  it('indexes overrides by device, so a request reads its own device’s only, newest first', async () => {
    const { dataSource } = countingDatabase();
    const flagsOf = (sql: string, params: unknown[]): Promise<unknown> => dataSource.query(sql, params as [string]);
    const rows = [
      { flag_id: 'a-flag', device_key_id: 'device-1', forced_value: 'true', expires_at: null },
      { flag_id: 'a-flag', device_key_id: 'device-2', forced_value: 'false', expires_at: null },
      { flag_id: 'a-flag', device_key_id: 'device-1', forced_value: 'false', expires_at: null },
      // A flood of another device's overrides is not what device-1's requests look through.
      ...Array.from({ length: 1000 }, (_, i) => ({
        flag_id: 'a-flag',
        device_key_id: `other-${i}`,
        forced_value: 'true',
        expires_at: null,
      })),
    ];
    const store = new FlagStore(
      {
        options: { url: undefined },
        query: (sql: string, params: unknown[]) =>
          /feature_flag_overrides/.test(sql) ? Promise.resolve(rows) : flagsOf(sql, params),
      } as unknown as DataSource,
      { logLevel: 'silent', flagStoreMaxApps: 5 } as AppConfig,
    );
    const set = await store.get('a');
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
