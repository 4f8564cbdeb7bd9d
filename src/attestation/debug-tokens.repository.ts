import { Injectable } from '@nestjs/common';
import type { AppId, OrganizationId } from '../common/access/tenant-id.js';
import { readChanges } from '../database/change-cursor.js';
import { queryRows } from '../database/sql.js';
import { UnitOfWork } from '../database/unit-of-work.js';
import type { DenySetDelta, RevokedDebugToken } from '../devices/deny-set-sources.service.js';

/** A debug token as the management routes show it (never its hash). */
export interface DebugTokenRow {
  id: string;
  name: string;
  prefix: string;
  created_by: string | null;
  expires_at: Date | null;
  revoked_at: Date | null;
  last_used_at: Date | null;
  created_at: Date;
}

/** What the exchange reads of a debug token by its secret's hash. */
export interface ExchangedDebugToken {
  id: string;
  app_id: string;
  expires_at: Date | null;
  revoked_at: Date | null;
  /** Whether its app accepts debug tokens (the apps feature's `app_debug_tokens_enabled`). */
  enabled: boolean;
}

const COLUMNS = 'id, name, prefix, created_by, expires_at, revoked_at, last_used_at, created_at';

/**
 * Until when a revoked debug token's device tokens can live: a token minted from it was minted
 * before the revocation (the exchange records its use only while the token is unrevoked) and
 * lives 30 days at most, and never past the debug token's own expiry; a day more for clocks.
 */
const HELD_UNTIL = `LEAST(t.revoked_at + interval '31 days', COALESCE(t.expires_at + interval '1 day', 'infinity'))`;

/** The owner of `debug_tokens`: management per app, the exchange, and the deny set's reads. */
@Injectable()
export class DebugTokensRepository {
  constructor(private readonly uow: UnitOfWork) {}

  /** The app's unrevoked tokens (expired ones included), newest first. */
  listUnrevoked(organizationId: OrganizationId, appId: string): Promise<DebugTokenRow[]> {
    return this.uow.manager().query<DebugTokenRow[]>(
      `SELECT ${COLUMNS} FROM debug_tokens
        WHERE organization_id = $1 AND app_id = $2 AND revoked_at IS NULL
        ORDER BY created_at DESC, id DESC`,
      [organizationId, appId],
    );
  }

  /** How many of the app's tokens are live (unrevoked, unexpired). */
  async countLive(organizationId: OrganizationId, appId: string): Promise<number> {
    const [{ live }] = await this.uow.manager().query<{ live: number }[]>(
      `SELECT count(*)::int AS live FROM debug_tokens
        WHERE organization_id = $1 AND app_id = $2 AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > now())`,
      [organizationId, appId],
    );
    return live;
  }

  async insert(
    organizationId: OrganizationId,
    appId: string,
    token: { name: string; prefix: string; hash: string; createdBy: string | null; expiresAt: Date | string | null },
  ): Promise<DebugTokenRow> {
    const [created] = await this.uow.manager().query<DebugTokenRow[]>(
      `INSERT INTO debug_tokens (organization_id, app_id, name, prefix, token_hash, created_by, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING ${COLUMNS}`,
      [organizationId, appId, token.name, token.prefix, token.hash, token.createdBy, token.expiresAt],
    );
    return created;
  }

  /**
   * Revokes the token (a second revocation keeps the first one's time): the row, `newly` when this
   * call revoked it, or null when the app has no such token.
   */
  async revoke(
    organizationId: OrganizationId,
    appId: string,
    tokenId: string,
  ): Promise<(DebugTokenRow & { newly: boolean }) | null> {
    const rows = await queryRows<DebugTokenRow & { newly: boolean }>(
      this.uow.manager(),
      `UPDATE debug_tokens SET revoked_at = COALESCE(revoked_at, now())
        WHERE id = $1 AND app_id = $2 AND organization_id = $3
        RETURNING ${COLUMNS}, revoked_at = now() AS newly`,
      [tokenId, appId, organizationId],
    );
    return rows[0] ?? null;
  }

  /** The token whose secret hashes to `hash`, with whether its app accepts debug tokens: one statement. */
  async byHash(hash: string): Promise<ExchangedDebugToken | null> {
    const rows = await this.uow.manager().query<ExchangedDebugToken[]>(
      `SELECT d.id, d.app_id, d.expires_at, d.revoked_at, COALESCE(app_debug_tokens_enabled(d.app_id), false) AS enabled
         FROM debug_tokens d WHERE d.token_hash = $1`,
      [hash],
    );
    return rows[0] ?? null;
  }

  /** Records the token's use, only while it is unrevoked: false when a revocation won. */
  async markUsed(appId: AppId, tokenId: string): Promise<boolean> {
    const used = await queryRows<{ id: string }>(
      this.uow.manager(),
      `UPDATE debug_tokens SET last_used_at = now() WHERE id = $1 AND app_id = $2 AND revoked_at IS NULL RETURNING id`,
      [tokenId, appId],
    );
    return used.length > 0;
  }

  /**
   * The debug tokens revoked after they were exchanged (`revoked_xid`, set by a trigger; a token
   * never exchanged has none and is never read) whose device tokens may still live: all of them
   * on a first read, those changed since `since` after (decision 0065). Both reads go through a
   * partial index holding only such tokens.
   */
  async revokedSince(since: string | null): Promise<DenySetDelta<RevokedDebugToken>> {
    const { cursor, rows } = await readChanges<{ app_id: string; token_id: string; until_ms: number }>(
      this.uow.manager(),
      {
        columns: `t.app_id, t.id::text AS token_id, (extract(epoch FROM ${HELD_UNTIL}) * 1000)::float8 AS until_ms`,
        table: 'debug_tokens t',
        whole: `t.revoked_xid IS NOT NULL AND t.revoked_at > now() - interval '31 days' AND ${HELD_UNTIL} > now()`,
        changedSince: (cursor) => `t.revoked_xid >= ${cursor}::xid8 AND ${HELD_UNTIL} > now()`,
        key: 'token_id',
      },
      since,
    );
    return { cursor, rows: rows.map((row) => ({ appId: row.app_id, tokenId: row.token_id, untilMs: row.until_ms })) };
  }

  /**
   * Deletes at most `batch` debug tokens, of every app, revoked or expired before `before` (a
   * housekeeping batch, one statement of its own); how many it deleted.
   */
  async deleteEndedBefore(before: Date, batch: number): Promise<number> {
    const rows = await queryRows<{ one: number }>(
      this.uow.manager(),
      `DELETE FROM debug_tokens WHERE id = ANY(ARRAY(
         SELECT id FROM debug_tokens WHERE revoked_at < $1 OR expires_at < $1 LIMIT $2))
       RETURNING 1 AS one`,
      [before, batch],
    );
    return rows.length;
  }

  /** Whether the app's debug token is revoked, read now. */
  async isRevoked(appId: AppId, tokenId: string): Promise<boolean> {
    const rows: unknown[] = await this.uow
      .manager()
      .query(`SELECT 1 FROM debug_tokens WHERE id = $1 AND app_id = $2 AND revoked_at IS NOT NULL`, [tokenId, appId]);
    return rows.length > 0;
  }
}
