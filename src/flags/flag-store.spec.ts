import { describe, expect, it } from '@jest/globals';
import type { DataSource } from 'typeorm';
import type { AppConfig } from '../config/app-config.js';
import { FlagStore } from './flag-store.js';

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
