// The device-token deny set reads blocked devices itself and the rest from the features that own
// it (apps, attestation) through DenySetSourcesService. A fake database and fake sources show how a
// load treats them: never believed while a source is missing, read in parallel, a failure keeps
// the previous sets, and revocations heard during a load survive it.
import { describe, expect, it } from '@jest/globals';
import type { DataSource } from 'typeorm';
import type { AppConfig } from '../../src/config/app-config.js';
import { BlockedDevices, MAX_TOKEN_LIFETIME_MS } from '../../src/devices/blocked-devices.js';
import { DenySetSourcesService, type RevokedDebugToken } from '../../src/devices/deny-set-sources.service.js';

const DAY_MS = 86_400_000;
/** Debug token ids (a device token's `sub` names one as `debug:<uuid>`). */
const TOKEN_1 = '00000000-0000-4000-8000-000000000001';
const TOKEN_2 = '00000000-0000-4000-8000-000000000002';

/** A promise settled from outside, to hold a read open while the test looks at what happens meanwhile. */
function deferred<T>() {
  let resolve!: (value: T) => void;
  let reject!: (error: Error) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

interface World {
  blocked: BlockedDevices;
  sources: DenySetSourcesService;
  /** The statements BlockedDevices sent to its own table. */
  statements: string[];
  /** What the next read of each part answers; a function is called at the read. */
  blockedDevices: () => Promise<{ app_id: string; key_id: string }[]>;
  debugTokens: (withinMs: number) => Promise<RevokedDebugToken[]>;
  inactiveApps: () => Promise<string[]>;
  debugTokenRevoked: (appId: string, tokenId: string) => Promise<boolean>;
}

function world(options: { provide?: boolean } = {}): World {
  const statements: string[] = [];
  const dataSource = {
    options: {},
    query: (sql: string) => {
      statements.push(sql);
      return sql.includes('is_blocked') && !sql.includes('key_id = $2') ? state.blockedDevices() : Promise.resolve([]);
    },
  } as unknown as DataSource;
  const sources = new DenySetSourcesService();
  const config = { logLevel: 'silent', logFormat: 'json' } as AppConfig;
  const state: World = {
    blocked: new BlockedDevices(dataSource, sources, config),
    sources,
    statements,
    blockedDevices: () => Promise.resolve([]),
    debugTokens: () => Promise.resolve([]),
    inactiveApps: () => Promise.resolve([]),
    debugTokenRevoked: () => Promise.resolve(false),
  };
  if (options.provide !== false) provideAll(state);
  return state;
}

function provideAll(state: World): void {
  state.sources.provide('inactiveApps', () => state.inactiveApps());
  state.sources.provide('revokedDebugTokens', (withinMs) => state.debugTokens(withinMs));
  state.sources.provide('debugTokenRevoked', (appId, tokenId) => state.debugTokenRevoked(appId, tokenId));
}

const refusal = async (state: World, appId: string, keyId: string) =>
  (await state.blocked.refusalFor(appId, keyId))?.message ?? null;

describe('DenySetSourcesService', () => {
  it('names the sources no feature provided, and a read of one rejects', async () => {
    const sources = new DenySetSourcesService();
    expect(sources.missing().sort()).toEqual(['debugTokenRevoked', 'inactiveApps', 'revokedDebugTokens']);
    sources.provide('inactiveApps', () => Promise.resolve(['app']));
    expect(sources.missing().sort()).toEqual(['debugTokenRevoked', 'revokedDebugTokens']);
    await expect(sources.inactiveApps()).resolves.toEqual(['app']);
    await expect(sources.revokedDebugTokens(1000)).rejects.toThrow(
      'No feature provides the deny-set source revokedDebugTokens',
    );
  });
});

describe('the device-token deny set over its sources', () => {
  it('refuses to answer before every source is provided, rather than believe an empty deny set', async () => {
    const state = world({ provide: false });
    state.sources.provide('inactiveApps', () => Promise.resolve([]));
    await expect(state.blocked.refusalFor('app', 'key')).rejects.toThrow(
      'The deny set lacks revokedDebugTokens, debugTokenRevoked',
    );
    expect(state.statements).toEqual([]);

    provideAll(state);
    state.inactiveApps = () => Promise.resolve(['app']);
    expect(await refusal(state, 'app', 'key')).toBe('The attestation token belongs to a deactivated app');
  });

  it('reads its own table and every source in parallel, revoked debug tokens over 31 days', async () => {
    const state = world();
    const devices = deferred<{ app_id: string; key_id: string }[]>();
    const tokens = deferred<RevokedDebugToken[]>();
    const apps = deferred<string[]>();
    const windows: number[] = [];
    state.blockedDevices = () => devices.promise;
    state.debugTokens = (withinMs) => {
      windows.push(withinMs);
      return tokens.promise;
    };
    state.inactiveApps = () => apps.promise;

    const answer = refusal(state, 'app-2', 'device-2');
    await new Promise((resolve) => setImmediate(resolve));
    // All three reads are out before any has answered.
    expect(state.statements).toHaveLength(1);
    expect(windows).toEqual([31 * DAY_MS]);
    expect(windows[0]).toBeGreaterThan(MAX_TOKEN_LIFETIME_MS);
    apps.resolve(['app-3']);
    tokens.resolve([{ appId: 'app-1', tokenId: TOKEN_1 }]);
    devices.resolve([{ app_id: 'app-2', key_id: 'device-2' }]);

    expect(await answer).toBe('The attestation token belongs to a blocked device');
    expect(await refusal(state, 'app-1', `debug:${TOKEN_1}`)).toBe(
      'The attestation token was minted from a revoked debug token',
    );
    expect(await refusal(state, 'app-1', `debug:${TOKEN_1}:simulator`)).toBe(
      'The attestation token was minted from a revoked debug token',
    );
    expect(await refusal(state, 'app-2', `debug:${TOKEN_1}`)).toBeNull();
    expect(await refusal(state, 'app-3', 'device-9')).toBe('The attestation token belongs to a deactivated app');
    expect(await refusal(state, 'app-1', 'device-2')).toBeNull();
  });

  it('refuses every token with a 503 until a first read succeeds, then answers from it', async () => {
    const state = world();
    state.blockedDevices = () => Promise.reject(new Error('connection refused'));
    await expect(state.blocked.refusalFor('app-2', 'device-9')).rejects.toMatchObject({
      status: 503,
      code: 'service_unavailable',
    });
    // Still nothing read whole: the next request reads again rather than trust empty sets.
    await expect(state.blocked.refusalFor('app-2', 'device-9')).rejects.toMatchObject({ status: 503 });
    state.blockedDevices = () => Promise.resolve([{ app_id: 'app-2', key_id: 'device-2' }]);
    expect(await refusal(state, 'app-2', 'device-2')).toBe('The attestation token belongs to a blocked device');
    expect(await refusal(state, 'app-2', 'device-9')).toBeNull();
  });

  it('keeps the previous sets, all of them, when a source fails', async () => {
    const state = world();
    state.blockedDevices = () => Promise.resolve([{ app_id: 'app-2', key_id: 'device-2' }]);
    state.debugTokens = () => Promise.resolve([{ appId: 'app-1', tokenId: TOKEN_1 }]);
    state.inactiveApps = () => Promise.resolve(['app-3']);
    await state.blocked.reload();

    // The next load would clear everything, but one of its parts fails: nothing is replaced.
    state.blockedDevices = () => Promise.resolve([]);
    state.debugTokens = () => Promise.resolve([]);
    state.inactiveApps = () => Promise.reject(new Error('connection lost'));
    await state.blocked.reload();
    expect(await refusal(state, 'app-2', 'device-2')).toBe('The attestation token belongs to a blocked device');
    expect(await refusal(state, 'app-1', `debug:${TOKEN_1}`)).toBe(
      'The attestation token was minted from a revoked debug token',
    );
    expect(await refusal(state, 'app-3', 'device-9')).toBe('The attestation token belongs to a deactivated app');

    state.inactiveApps = () => Promise.resolve([]);
    await state.blocked.reload();
    expect(await refusal(state, 'app-2', 'device-2')).toBeNull();
    expect(await refusal(state, 'app-3', 'device-9')).toBeNull();
  });

  it('applies again the revocations heard while a load was reading', async () => {
    const state = world();
    const apps = deferred<string[]>();
    state.inactiveApps = () => apps.promise;
    const loading = state.blocked.reload();
    // Heard after the sources read their rows, before the load replaced the sets.
    const hear = (revocation: object) => state.blocked['receive'](JSON.stringify(revocation));
    hear({ kind: 'app', appId: 'app-3', state: 'inactive' });
    hear({ kind: 'debugToken', appId: 'app-1', tokenId: TOKEN_1 });
    hear({ kind: 'device', appIds: ['app-2'], keyId: 'device-2', blocked: true });
    apps.resolve([]);
    await loading;
    expect(await refusal(state, 'app-3', 'device-9')).toBe('The attestation token belongs to a deactivated app');
    expect(await refusal(state, 'app-1', `debug:${TOKEN_1}`)).toBe(
      'The attestation token was minted from a revoked debug token',
    );
    expect(await refusal(state, 'app-2', 'device-2')).toBe('The attestation token belongs to a blocked device');
  });

  it('asks the owner of debug tokens, in one read, whether one is revoked now', async () => {
    const state = world();
    const asked: string[][] = [];
    state.debugTokenRevoked = (appId, tokenId) => {
      asked.push([appId, tokenId]);
      return Promise.resolve(tokenId === TOKEN_1);
    };
    expect(await state.blocked.refusalNow('app-1', `debug:${TOKEN_1}:simulator`)).toBe('debug_token_revoked');
    expect(await state.blocked.refusalNow('app-1', `debug:${TOKEN_2}`)).toBeNull();
    expect(asked).toEqual([
      ['app-1', TOKEN_1],
      ['app-1', TOKEN_2],
    ]);
    expect(state.statements).toEqual([]);
    expect(await state.blocked.refusalNow('app-1', 'device-1')).toBeNull();
    expect(state.statements).toHaveLength(1);
  });
});
