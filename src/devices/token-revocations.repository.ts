import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { AppId } from '../common/access/tenant-id.js';
import { PgListener, type PgListenerOptions } from '../database/pg-listener.js';
import { UnitOfWork } from '../database/unit-of-work.js';
import type { Revocation } from './deny-set-state.js';

/** The channel every instance's deny set listens on (BlockedDevices). */
export const TOKEN_REVOCATIONS_CHANNEL = 'token_revocations';

/**
 * The token revocation announcements (PostgreSQL NOTIFY on `token_revocations`). Written in the
 * open unit of work, so an announcement reaches the instances when the change commits, never
 * after a rollback; every instance hears them through `listener`.
 */
@Injectable()
export class TokenRevocationsRepository {
  constructor(
    private readonly uow: UnitOfWork,
    @InjectDataSource() private readonly dataSource: DataSource,
  ) {}

  /** A listener on the channel, on its own connection to the database (started by the caller). */
  listener(options: Omit<PgListenerOptions, 'url' | 'channel'>): PgListener {
    return new PgListener({
      ...options,
      url: (this.dataSource.options as { url?: string }).url,
      channel: TOKEN_REVOCATIONS_CHANNEL,
    });
  }

  /** Announces `revocation` on commit of the open unit of work. */
  async announce(revocation: Revocation): Promise<void> {
    await this.uow.manager().query(`SELECT pg_notify($1, $2)`, [TOKEN_REVOCATIONS_CHANNEL, JSON.stringify(revocation)]);
  }

  /** Apps deleted with their organization, announced in one statement (one message per app). */
  async announceAppsDeleted(appIds: readonly AppId[]): Promise<void> {
    if (!appIds.length) return;
    await this.uow.manager().query(
      `SELECT pg_notify($1, json_build_object('kind', 'app', 'appId', app.id, 'state', 'deleted')::text)
         FROM unnest($2::uuid[]) AS app(id)`,
      [TOKEN_REVOCATIONS_CHANNEL, appIds],
    );
  }
}
