import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { readChanges } from '../database/change-cursor.js';
import {
  DenySetSource,
  type DenySetDelta,
  type DenySetSources,
  type RevokedDebugToken,
} from '../devices/deny-set-sources.service.js';

/**
 * Until when a revoked debug token's device tokens can live: a token minted from it was minted
 * before the revocation (the exchange records its use only while the token is unrevoked) and
 * lives 30 days at most, and never past the debug token's own expiry; a day more for clocks.
 */
const HELD_UNTIL = `LEAST(t.revoked_at + interval '31 days', COALESCE(t.expires_at + interval '1 day', 'infinity'))`;

/** The revoked debug tokens whose device tokens the deny set refuses, read from attestation's own table. */
@Injectable()
@DenySetSource(['revokedDebugTokens', 'debugTokenRevoked'])
export class DebugTokenDenySetSources implements Pick<DenySetSources, 'revokedDebugTokens' | 'debugTokenRevoked'> {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /**
   * The debug tokens revoked after they were exchanged (`revoked_xid`, set by a trigger; a token
   * never exchanged has none and is never read) whose device tokens may still live: all of them
   * on a first read, those changed since `since` after (decision 0065). Both reads go through a
   * partial index holding only such tokens.
   */
  async revokedDebugTokens(since: string | null): Promise<DenySetDelta<RevokedDebugToken>> {
    const { cursor, rows } = await readChanges<{ app_id: string; token_id: string; until_ms: number }>(
      this.dataSource,
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

  async debugTokenRevoked(appId: string, tokenId: string): Promise<boolean> {
    const rows: unknown[] = await this.dataSource.query(
      `SELECT 1 FROM debug_tokens WHERE id = $1 AND app_id = $2 AND revoked_at IS NOT NULL`,
      [tokenId, appId],
    );
    return rows.length > 0;
  }
}
