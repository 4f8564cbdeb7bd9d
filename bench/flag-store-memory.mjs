// node --expose-gc bench/flag-store-memory.mjs [--apps 10000] [--flags 50]
// The memory the server's flag store (src/flags/flag-store.ts, from dist/) holds for many apps:
// the real FlagStore, fed by a stand-in for the database that answers its two queries with rows
// shaped as pg returns them (each flag's `environments` JSON parsed per row, 5 rules of one
// condition each, rollout on every other flag, no device overrides), filled through `get()` for
// every app as GET /api/v1/flags fills it. Prints one JSON line: heap, external and resident
// growth after full garbage collections, per app and in total. bench/run.mjs runs it in its own
// process so nothing else in that process's heap moves the figure.
// Should the store outgrow three quarters of this process's heap limit first (it holds nothing
// shared between apps, so it grows linearly), filling stops there and the figure for all apps is
// that measured per app times their number, marked `extrapolatedFrom`.
import 'reflect-metadata';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { getHeapStatistics } from 'node:v8';
import { flagEnvironments } from './fixtures.mjs';

const root = new URL('..', import.meta.url).pathname;
const args = process.argv.slice(2);
const option = (name, fallback) => {
  const index = args.indexOf(`--${name}`);
  return index >= 0 && args[index + 1] ? Number(args[index + 1]) : fallback;
};
const appCount = option('apps', 10_000);
const flagsPerApp = option('flags', 50);

if (typeof globalThis.gc !== 'function') throw new Error('run with node --expose-gc');

const { FlagStore } = await import(join(root, 'dist/src/flags/flag-store.js'));
const { FlagStoreRepository } = await import(join(root, 'dist/src/flags/flag-store.repository.js'));

/** What the repository's `manager.query` answers for the store's statements: the flags of an app, and no overrides. */
function rowsFor(sql) {
  if (/feature_flag_overrides/.test(sql)) return [];
  if (/FROM\s+feature_flags/i.test(sql)) {
    return Array.from({ length: flagsPerApp }, (_, f) => ({
      // Flat, as pg gives it: randomUUID() answers a string built of many pieces, which would count.
      id: JSON.parse(`"${randomUUID()}"`),
      key: `flag_${String(f).padStart(2, '0')}`,
      value_type: 'boolean',
      default_value: 'false',
      // pg parses each row's jsonb text on its own: no object is shared between rows or apps.
      environments: JSON.parse(JSON.stringify(flagEnvironments(f))),
    }));
  }
  throw new Error(`the flag store asked something this measurement does not answer: ${sql.slice(0, 120)}`);
}

// The store's real repository, over a unit of work whose manager is the stand-in above.
const manager = { query: async (sql) => rowsFor(sql) };
const unitOfWork = { manager: () => manager, outside: (work) => work() };
const repository = new FlagStoreRepository(unitOfWork, { options: { url: undefined } });
// No bound: the measurement holds every app it fills (the service drops the least recently asked past FLAG_STORE_MAX_APPS).
const store = new FlagStore(repository, { logLevel: 'silent', flagStoreMaxApps: Number.POSITIVE_INFINITY });

function settle() {
  for (let i = 0; i < 4; i++) globalThis.gc();
  return process.memoryUsage();
}

const appIds = Array.from({ length: appCount }, () => randomUUID());
const ceiling = getHeapStatistics().heap_size_limit * 0.75;
const before = settle();
const started = performance.now();
let filled = 0;
for (const appId of appIds) {
  const set = await store.get(appId);
  if (set.flags.length !== flagsPerApp) throw new Error(`app ${appId} holds ${set.flags.length} flags`);
  filled += 1;
  if (filled % 100 === 0 && process.memoryUsage().heapUsed > ceiling) break;
}
const buildMs = performance.now() - started;
const after = settle();
// The store must still hold every set it was given, or the figure measures nothing.
const held = (await Promise.all(appIds.slice(0, Math.min(filled, 10)).map((appId) => store.get(appId)))).length;

const mb = (bytes) => Math.round((bytes / 1024 / 1024) * 10) / 10;
const perApp = (after.heapUsed - before.heapUsed + after.external - before.external) / filled;
const scale = appCount / filled;
console.log(
  JSON.stringify({
    apps: appCount,
    flagsPerApp,
    rulesPerFlag: 5,
    heapMb: mb((after.heapUsed - before.heapUsed) * scale),
    externalMb: mb((after.external - before.external) * scale),
    rssMb: mb((after.rss - before.rss) * scale),
    totalMb: mb(perApp * appCount),
    perAppKb: Math.round((perApp / 1024) * 10) / 10,
    /** How long filling took for the apps filled (all of them unless extrapolated). */
    buildSeconds: Math.round(buildMs / 100) / 10,
    extrapolatedFrom: filled < appCount ? filled : null,
    held,
  }),
);
