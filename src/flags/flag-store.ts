import { hash } from 'node:crypto';
import type { AppId } from '../common/access/tenant-id.js';
import { EventEmitter } from 'node:events';
import { Inject, Injectable, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import type { Logger } from 'pino';
import { createLogger } from '../common/logging/logger.js';
import type { PgListener } from '../database/pg-listener.js';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { compileFlagSet, type CompiledFlag } from './evaluation/compile-flag.js';
import { indexFlagSet, type FlagSetIndex } from './evaluation/flag-set-index.js';
import { planFlagSet, type FlagSetPlan } from './evaluation/flag-set-plan.js';
import type { FlagOverrideRecord } from './evaluation/flag-types.js';
import { FlagStoreRepository } from './flag-store.repository.js';

export interface AppFlagSet {
  /** Compiled once, for GET /flags and the evaluate endpoint's trace. */
  flags: CompiledFlag[];
  /** What GET /flags serves a device without overrides: fixed flags serialised once (flag-set-plan.ts). */
  plan: FlagSetPlan;
  /** The flags by id and by key, for evaluating one flag (its prerequisite chain only) or a traced pass. */
  index: FlagSetIndex;
  /**
   * Names the flag definitions the set was compiled from and the code that serves them: a digest
   * of the stored rows and the deployed commit, equal on every instance that loaded the same rows.
   * With a device's inputs (`plannedInputs`), it decides that device's answer: the ETag's source.
   */
  version: string;
  /**
   * Device key → flag id → that device's overrides of the flag, newest first. Indexed by device so
   * a request reads only its own device's overrides, however many the app holds (issue 30).
   */
  overridesByDevice: Map<string, Map<string, FlagOverrideRecord[]>>;
}

const NO_OVERRIDES: ReadonlyMap<string, readonly FlagOverrideRecord[]> = new Map();

/** One device's overrides in a set, by flag id (none without a device). */
export function overridesOf(
  set: AppFlagSet,
  deviceKeyId: string | null,
): ReadonlyMap<string, readonly FlagOverrideRecord[]> {
  return (deviceKeyId !== null && set.overridesByDevice.get(deviceKeyId)) || NO_OVERRIDES;
}

/**
 * Each app's flags, compiled, and its device overrides, held in memory so GET /flags reads no
 * database. A change commits with `pg_notify('flag_changes', appId)`; every instance LISTENs,
 * drops that app's set and tells its stream subscribers, so all instances converge within
 * milliseconds of the commit. At most `FLAG_STORE_MAX_APPS` apps are held: the least recently
 * asked is dropped first and loaded again when next asked, so the memory of an instance is
 * bounded whatever the number of tenants.
 */
@Injectable()
export class FlagStore implements OnModuleInit, OnModuleDestroy {
  /** By app id, least recently asked first (a Map keeps insertion order). */
  private readonly sets = new Map<string, Promise<AppFlagSet>>();
  private readonly changes = new EventEmitter();
  private readonly listener: PgListener;
  private readonly maxApps: number;
  private readonly commit: string;

  constructor(
    private readonly repository: FlagStoreRepository,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.changes.setMaxListeners(0);
    this.maxApps = config.flagStoreMaxApps ?? Number.POSITIVE_INFINITY;
    this.commit = config.serviceCommit ?? '';
    const logger: Logger = createLogger(config).child({ component: 'flag-store' });
    this.listener = repository.listener({
      logger,
      onMessage: (appId) => this.invalidate(appId),
      // While disconnected, notifications may have been missed: everything cached is dropped.
      onReconnect: () => {
        this.sets.clear();
        this.changes.emit('change', '*');
      },
    });
  }

  async onModuleInit(): Promise<void> {
    await this.listener.start();
  }

  async onModuleDestroy(): Promise<void> {
    await this.listener.close();
  }

  get(appId: AppId): Promise<AppFlagSet> {
    const held = this.sets.get(appId);
    if (held) {
      // Asked now: moves to the end, the last to be dropped.
      this.sets.delete(appId);
      this.sets.set(appId, held);
      return held;
    }
    const set = this.load(appId);
    this.sets.set(appId, set);
    // A failed load is asked again next time (unless a newer load took its place meanwhile).
    set.catch(() => {
      if (this.sets.get(appId) === set) this.sets.delete(appId);
    });
    while (this.sets.size > this.maxApps) this.sets.delete(this.sets.keys().next().value!);
    return set;
  }

  /** How many apps' flags this instance holds (at most `FLAG_STORE_MAX_APPS`). */
  get size(): number {
    return this.sets.size;
  }

  /** Forgets an app's set here at once; the notification does the same on every instance. */
  invalidate(appId: string): void {
    this.sets.delete(appId);
    this.changes.emit('change', appId);
  }

  /** Calls `listener` whenever an app's flags or overrides change, on any instance. */
  subscribe(appId: string, listener: () => void): () => void {
    const handler = (changed: string) => {
      if (changed === appId || changed === '*') listener();
    };
    this.changes.on('change', handler);
    return () => this.changes.off('change', handler);
  }

  private async load(appId: AppId): Promise<AppFlagSet> {
    const { flags, overrides } = await this.repository.load(appId);
    const byDevice = new Map<string, Map<string, FlagOverrideRecord[]>>();
    for (const row of overrides) {
      let byFlag = byDevice.get(row.deviceKeyId);
      if (!byFlag) byDevice.set(row.deviceKeyId, (byFlag = new Map<string, FlagOverrideRecord[]>()));
      const list = byFlag.get(row.flagId) ?? [];
      list.push({ deviceKeyId: row.deviceKeyId, forcedValue: row.forcedValue, expiresAt: row.expiresAt });
      byFlag.set(row.flagId, list);
    }
    const compiled = compileFlagSet(flags);
    // Rows come ordered by key and jsonb text is normalised by PostgreSQL: every instance digests the same text.
    const version = hash(
      'sha256',
      `${this.commit}
${JSON.stringify(flags)}`,
      'base64url',
    );
    return {
      flags: compiled,
      plan: planFlagSet(compiled),
      index: indexFlagSet(compiled),
      version,
      overridesByDevice: byDevice,
    };
  }
}
