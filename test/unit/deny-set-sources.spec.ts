// The device-token deny set reads blocked devices itself and the rest from the features that own
// it (apps, attestation) through DenySetSourcesService, which finds the providers marked
// @DenySetSource when the devices module starts. A fake database and fake sources show how a
// load treats them: never believed while a source is missing, read in parallel, incremental after
// the first read (each part asked since the cursor of its previous read), a failure keeps the
// previous sets and cursors, and revocations heard during a load survive it.
import { describe, expect, it } from '@jest/globals';
import type { DataSource } from 'typeorm';
import type { AppConfig } from '../../src/config/app-config.js';
import type { UnitOfWork } from '../../src/database/unit-of-work.js';
import { DenySet } from '../../src/devices/deny-set.js';
import { DevicesRepository } from '../../src/devices/devices.repository.js';
import { TokenRevocationsRepository } from '../../src/devices/token-revocations.repository.js';
import {
  DenySetSource,
  DenySetSourcesService,
  type DenySetDelta,
  type DenySetSources,
  type RevokedDebugToken,
} from '../../src/devices/deny-set-sources.service.js';
import { fakeDiscovery } from '../harness/fake-discovery.js';
import { trustAppId } from '../../src/common/access/tenant-id.js';

const DAY_MS = 86_400_000;
const HELD = Date.now() + 30 * DAY_MS;

interface BlockRow {
  app_id: string;
  key_id: string;
  is_blocked?: boolean;
}
/** Debug token ids (a device token's `sub` names one as `debug:<uuid>`). */
const TOKEN_1 = '00000000-0000-4000-8000-000000000001';
const TOKEN_2 = '00000000-0000-4000-8000-000000000002';
const APP_1 = trustAppId('app-1');

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
  blocked: DenySet;
  sources: DenySetSourcesService;
  /** The providers the application has (DenySetSourcesService keeps those marked @DenySetSource). */
  providers: object[];
  /** The statements DenySet sent to its own table. */
  statements: string[];
  /** What the next read of each part answers; a function is called at the read with its cursor. */
  blockedDevices: (since: string | null) => Promise<BlockRow[]>;
  debugTokens: (since: string | null) => Promise<DenySetDelta<RevokedDebugToken>>;
  inactiveApps: () => Promise<string[]>;
  debugTokenRevoked: (appId: string, tokenId: string) => Promise<boolean>;
}

function world(options: { provide?: boolean } = {}): World {
  const statements: string[] = [];
  let reads = 0;
  const dataSource = {
    options: {},
    // Answers the deny set's read of devices as PostgreSQL would: the cursor on every row, one row
    // of nulls beside it when nothing changed.
    query: async (sql: string, parameters: unknown[] = []) => {
      statements.push(sql);
      if (!sql.includes('pg_snapshot_xmin')) return [];
      const since = (parameters[0] as string | undefined) ?? null;
      const rows = await state.blockedDevices(since);
      // A transaction id, as pg_snapshot_xmin answers it: it only grows from read to read.
      const cursor = String(1000 + ++reads);
      if (!rows.length) return [{ __cursor: cursor, app_id: null, key_id: null, is_blocked: null }];
      return rows.map((row) => ({ __cursor: cursor, is_blocked: true, ...row }));
    },
  } as unknown as DataSource;
  // The repositories run their statements on the fake database, as outside any unit of work.
  const uow = { manager: () => dataSource } as unknown as UnitOfWork;
  const providers: object[] = [];
  const discovery = fakeDiscovery(() => providers);
  const sources = new DenySetSourcesService(discovery);
  const config = { logLevel: 'silent', logFormat: 'json' } as AppConfig;
  const state: World = {
    blocked: new DenySet(
      new DevicesRepository(uow),
      new TokenRevocationsRepository(uow, dataSource),
      sources,
      config,
      discovery,
    ),
    sources,
    providers,
    statements,
    blockedDevices: () => Promise.resolve([]),
    debugTokens: (since) => Promise.resolve(delta(since, [])),
    inactiveApps: () => Promise.resolve([]),
    debugTokenRevoked: () => Promise.resolve(false),
  };
  if (options.provide !== false) start(state, new AppsSource(state), new DebugTokensSource(state));
  return state;
}

/** The application starts with these providers: the sources are found among them. */
function start(state: World, ...providers: object[]): void {
  state.providers.splice(0, Infinity, ...providers);
  state.sources.onModuleInit();
}

@DenySetSource(['inactiveApps'])
class AppsSource implements Pick<DenySetSources, 'inactiveApps'> {
  constructor(private readonly state: Pick<World, 'inactiveApps'>) {}
  inactiveApps() {
    return this.state.inactiveApps();
  }
}

@DenySetSource(['revokedDebugTokens', 'debugTokenRevoked'])
class DebugTokensSource implements Pick<DenySetSources, 'revokedDebugTokens' | 'debugTokenRevoked'> {
  constructor(private readonly state: World) {}
  revokedDebugTokens(since: string | null) {
    return this.state.debugTokens(since);
  }
  debugTokenRevoked(appId: string, tokenId: string) {
    return this.state.debugTokenRevoked(appId, tokenId);
  }
}

/** A read of revoked debug tokens after `since`: the next cursor follows it. */
function delta(since: string | null, rows: RevokedDebugToken[]): DenySetDelta<RevokedDebugToken> {
  return { cursor: `tokens-${Number(since?.split('-')[1] ?? 0) + 1}`, rows };
}

const revokedToken = (appId: string, tokenId: string): RevokedDebugToken => ({ appId, tokenId, untilMs: HELD });

const refusal = async (state: World, appId: string, keyId: string) =>
  (await state.blocked.refusalFor(appId, keyId))?.message ?? null;

describe('DenySetSourcesService', () => {
  it('names the sources no provider marked @DenySetSource implements, and a read of one rejects', async () => {
    const providers: object[] = [];
    const sources = new DenySetSourcesService(fakeDiscovery(() => providers));
    sources.onModuleInit();
    expect(sources.missing().sort()).toEqual(['debugTokenRevoked', 'inactiveApps', 'revokedDebugTokens']);
    // An unmarked provider with the same method is no source.
    providers.push(
      { inactiveApps: () => Promise.resolve(['unmarked']) },
      new AppsSource({ inactiveApps: () => Promise.resolve(['app']) }),
    );
    sources.onModuleInit();
    expect(sources.missing().sort()).toEqual(['debugTokenRevoked', 'revokedDebugTokens']);
    await expect(sources.inactiveApps()).resolves.toEqual(['app']);
    await expect(sources.revokedDebugTokens(null)).rejects.toThrow(
      'No feature provides the deny-set source revokedDebugTokens',
    );
  });

  it('fails the start when two providers claim one source, or one lacks the method it claims', () => {
    const providers: object[] = [];
    const sources = new DenySetSourcesService(fakeDiscovery(() => providers));
    const apps = { inactiveApps: () => Promise.resolve([]) };
    providers.push(new AppsSource(apps), new AppsSource(apps));
    expect(() => sources.onModuleInit()).toThrow('The deny-set source inactiveApps is provided twice');
    @DenySetSource(['debugTokenRevoked'])
    class Mislabelled {}
    providers.splice(0, Infinity, new Mislabelled());
    expect(() => sources.onModuleInit()).toThrow(
      'Mislabelled is marked as the deny-set source debugTokenRevoked without that method',
    );
  });
});

describe('the device-token deny set over its sources', () => {
  it('refuses to answer before every source is provided, rather than believe an empty deny set', async () => {
    const state = world({ provide: false });
    start(state, new AppsSource(state));
    await expect(state.blocked.refusalFor('app', 'key')).rejects.toThrow(
      'The deny set lacks revokedDebugTokens, debugTokenRevoked',
    );
    expect(state.statements).toEqual([]);

    start(state, new AppsSource(state), new DebugTokensSource(state));
    state.inactiveApps = () => Promise.resolve(['app']);
    expect(await refusal(state, 'app', 'key')).toBe('The attestation token belongs to a deactivated app');
  });

  it('reads its own table and every source in parallel, whole at first, then what changed since each cursor', async () => {
    const state = world();
    const devices = deferred<BlockRow[]>();
    const tokens = deferred<DenySetDelta<RevokedDebugToken>>();
    const apps = deferred<string[]>();
    const sinces: { devices: (string | null)[]; tokens: (string | null)[] } = { devices: [], tokens: [] };
    state.blockedDevices = (since) => {
      sinces.devices.push(since);
      return devices.promise;
    };
    state.debugTokens = (since) => {
      sinces.tokens.push(since);
      return tokens.promise;
    };
    state.inactiveApps = () => apps.promise;

    const answer = refusal(state, 'app-2', 'device-2');
    await new Promise((resolve) => setImmediate(resolve));
    // All three reads are out before any has answered, the first of each whole.
    expect(state.statements).toHaveLength(1);
    expect(sinces).toEqual({ devices: [null], tokens: [null] });
    apps.resolve(['app-3']);
    tokens.resolve(delta(null, [revokedToken('app-1', TOKEN_1)]));
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

    // The next reads ask from the cursors the previous answered, and apply only what they bring:
    // the device unblocked since, a second token revoked; the first token stays held.
    state.blockedDevices = (since) => {
      sinces.devices.push(since);
      return Promise.resolve([{ app_id: 'app-2', key_id: 'device-2', is_blocked: false }]);
    };
    state.debugTokens = (since) => {
      sinces.tokens.push(since);
      return Promise.resolve(delta(since, [revokedToken('app-1', TOKEN_2)]));
    };
    state.inactiveApps = () => Promise.resolve([]);
    await state.blocked.reload();
    expect(sinces).toEqual({ devices: [null, '1001'], tokens: [null, 'tokens-1'] });
    expect(state.statements[1]).toContain('t.block_xid >= $1::xid8');
    expect(await refusal(state, 'app-2', 'device-2')).toBeNull();
    expect(await refusal(state, 'app-1', `debug:${TOKEN_1}`)).not.toBeNull();
    expect(await refusal(state, 'app-1', `debug:${TOKEN_2}`)).not.toBeNull();
    expect(state.blocked.sizes()).toMatchObject({ blockedDevices: 0, revokedDebugTokens: 2, inactiveApps: 0 });
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
    state.debugTokens = (since) => Promise.resolve(delta(since, [revokedToken('app-1', TOKEN_1)]));
    state.inactiveApps = () => Promise.resolve(['app-3']);
    await state.blocked.reload();

    // The next load would unblock the device and clear the apps, but one of its parts fails:
    // nothing is applied, and the cursors stay where they were.
    const sinces: (string | null)[] = [];
    state.blockedDevices = (since) => {
      sinces.push(since);
      return Promise.resolve([{ app_id: 'app-2', key_id: 'device-2', is_blocked: false }]);
    };
    state.debugTokens = (since) => Promise.resolve(delta(since, []));
    state.inactiveApps = () => Promise.reject(new Error('connection lost'));
    await state.blocked.reload();
    expect(await refusal(state, 'app-2', 'device-2')).toBe('The attestation token belongs to a blocked device');
    expect(await refusal(state, 'app-1', `debug:${TOKEN_1}`)).toBe(
      'The attestation token was minted from a revoked debug token',
    );
    expect(await refusal(state, 'app-3', 'device-9')).toBe('The attestation token belongs to a deactivated app');

    state.inactiveApps = () => Promise.resolve([]);
    await state.blocked.reload();
    expect(sinces).toEqual(['1001', '1001']);
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
    expect(await state.blocked.refusalNow(APP_1, `debug:${TOKEN_1}:simulator`)).toBe('debug_token_revoked');
    expect(await state.blocked.refusalNow(APP_1, `debug:${TOKEN_2}`)).toBeNull();
    expect(asked).toEqual([
      ['app-1', TOKEN_1],
      ['app-1', TOKEN_2],
    ]);
    expect(state.statements).toEqual([]);
    expect(await state.blocked.refusalNow(APP_1, 'device-1')).toBeNull();
    expect(state.statements).toHaveLength(1);
  });
});
