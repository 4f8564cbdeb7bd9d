import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Logger } from 'pino';
import { DataSource } from 'typeorm';
import { PgListener } from '../database/pg-listener.js';
import type { AppId } from '../common/access/tenant-id.js';
import { UnitOfWork } from '../database/unit-of-work.js';
import type { FlagDefinition, FlagOverrideRecord } from './evaluation/flag-types.js';

const FLAG_CHANGES_CHANNEL = 'flag_changes';

/** An app's flags and live device overrides, as FlagStore compiles them. */
export interface StoredFlagSet {
  flags: FlagDefinition[];
  /** Unexpired overrides, newest first. */
  overrides: (FlagOverrideRecord & { flagId: string })[];
}

/**
 * The read model of FlagStore, the in-memory flags the SDK's GET /flags serves: an app's flags
 * and overrides in one read, and the `flag_changes` channel a committed change notifies (with
 * `pg_notify` in its unit of work, so delivered on commit and never after a rollback) and every
 * instance listens on.
 */
@Injectable()
export class FlagStoreRepository {
  constructor(
    private readonly uow: UnitOfWork,
    @InjectDataSource() private readonly dataSource: DataSource,
  ) {}

  /**
   * The app's flags (by key) and unexpired overrides. `appId` is the store's key: the app of a
   * request the SDK's tenant resolver established.
   */
  load(appId: AppId): Promise<StoredFlagSet> {
    // Outside any open unit of work: the store holds committed flags only.
    return this.uow.outside(() => this.read(appId));
  }

  /** Tells every instance, once the open unit of work commits, that the app's flags changed. */
  async notifyChanged(appId: string): Promise<void> {
    await this.uow.manager().query(`SELECT pg_notify($1, $2)`, [FLAG_CHANGES_CHANNEL, appId]);
  }

  /** A listener on the `flag_changes` channel (started and closed by its holder). */
  listener(handlers: { logger: Logger; onMessage: (appId: string) => void; onReconnect: () => void }): PgListener {
    return new PgListener({
      url: (this.dataSource.options as { url?: string }).url,
      channel: FLAG_CHANGES_CHANNEL,
      ...handlers,
    });
  }

  private async read(appId: string): Promise<StoredFlagSet> {
    const manager = this.uow.manager();
    const [flags, overrides] = await Promise.all([
      manager.query<
        {
          id: string;
          key: string;
          value_type: FlagDefinition['valueType'];
          default_value: string;
          environments: FlagDefinition['environments'];
        }[]
      >(`SELECT id, key, value_type, default_value, environments FROM feature_flags WHERE app_id = $1 ORDER BY key`, [
        appId,
      ]),
      manager.query<{ flag_id: string; device_key_id: string; forced_value: string; expires_at: Date | null }[]>(
        `SELECT o.flag_id, o.device_key_id, o.forced_value, o.expires_at
           FROM feature_flag_overrides o JOIN feature_flags f ON f.id = o.flag_id
          WHERE f.app_id = $1 AND (o.expires_at IS NULL OR o.expires_at > now())
          ORDER BY o.created_at DESC`,
        [appId],
      ),
    ]);
    return {
      flags: flags.map((row) => ({
        id: row.id,
        key: row.key,
        valueType: row.value_type,
        defaultValue: row.default_value,
        environments: row.environments,
      })),
      overrides: overrides.map((row) => ({
        flagId: row.flag_id,
        deviceKeyId: row.device_key_id,
        forcedValue: row.forced_value,
        expiresAt: row.expires_at,
      })),
    };
  }
}
