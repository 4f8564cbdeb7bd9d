import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';
import { trustAppId, type AppId } from '../common/access/tenant-id.js';
import { notFound } from '../common/errors/app-exception.js';
import { sqlReference } from '../database/sql.js';

/** How a read runs: in the caller's transaction (`manager`), and with the app row locked FOR UPDATE (`lock`). */
export interface AppQuery {
  manager?: EntityManager;
  /** Locks the app row until the caller's transaction ends. */
  lock?: boolean;
}

/**
 * The apps table's part of another feature's query that must stay one statement (the webhook
 * outbox, inside the transaction of the change it announces): true when the app whose id is
 * `appId` (a parameter or column of the caller's query) has webhooks enabled.
 */
export function appWebhooksEnabled(appId: string): string {
  return `EXISTS (SELECT 1 FROM apps WHERE id = ${sqlReference(appId)} AND webhook_enabled)`;
}

/** Likewise for the debug-token exchange: whether the app whose id is `appId` accepts debug tokens. */
export function appDebugTokensEnabled(appId: string): string {
  return `(SELECT debug_tokens_enabled FROM apps WHERE id = ${sqlReference(appId)})`;
}

/**
 * The owner of the `apps` table for the features that hang something off an app (flags, push
 * credentials, release notes, risk-alert rules, debug tokens, token verification). Every method
 * takes the organization id first: an app of another organization is as unknown as a missing one.
 */
@Injectable()
export class AppsRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** The app's state, or null when the organization has no app with this id. */
  async find(organizationId: string, appId: string, options: AppQuery = {}): Promise<{ isActive: boolean } | null> {
    const manager = options.manager ?? this.dataSource.manager;
    const rows = await manager.query<{ is_active: boolean }[]>(
      `SELECT is_active FROM apps WHERE id = $1 AND organization_id = $2${options.lock ? ' FOR UPDATE' : ''}`,
      [appId, organizationId],
    );
    return rows[0] ? { isActive: rows[0].is_active } : null;
  }

  /** 404 `App` unless the organization has an app with this id. */
  async assertExists(organizationId: string, appId: string, options: AppQuery = {}): Promise<void> {
    if (!(await this.find(organizationId, appId, options))) throw notFound('App');
  }

  /** The bundle id (the APNs topic) of each of these apps, by app id. */
  async bundleIds(appIds: readonly AppId[]): Promise<Map<AppId, string>> {
    if (!appIds.length) return new Map();
    const rows = await this.dataSource.query<{ id: string; bundle_id: string }[]>(
      `SELECT id, bundle_id FROM apps WHERE id = ANY($1::uuid[])`,
      [[...appIds]],
    );
    return new Map(rows.map((row) => [trustAppId(row.id), row.bundle_id]));
  }
}
