import { Injectable, type OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { DenySetSourcesService, type RevokedDebugToken } from '../devices/deny-set-sources.service.js';

/** The revoked debug tokens whose device tokens the deny set refuses, read from attestation's own table. */
@Injectable()
export class DebugTokenDenySetSources implements OnModuleInit {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly sources: DenySetSourcesService,
  ) {}

  onModuleInit(): void {
    this.sources.provide('revokedDebugTokens', (withinMs) => this.revokedSince(withinMs));
    this.sources.provide('debugTokenRevoked', (appId, tokenId) => this.isRevoked(appId, tokenId));
  }

  /** Debug tokens revoked within the last `withinMs` milliseconds (older ones minted no live token). */
  async revokedSince(withinMs: number): Promise<RevokedDebugToken[]> {
    const rows = await this.dataSource.query<{ app_id: string; id: string }[]>(
      `SELECT app_id, id::text FROM debug_tokens WHERE revoked_at > now() - make_interval(secs => $1)`,
      [withinMs / 1000],
    );
    return rows.map((row) => ({ appId: row.app_id, tokenId: row.id }));
  }

  async isRevoked(appId: string, tokenId: string): Promise<boolean> {
    const rows: unknown[] = await this.dataSource.query(
      `SELECT 1 FROM debug_tokens WHERE id = $1 AND app_id = $2 AND revoked_at IS NOT NULL`,
      [tokenId, appId],
    );
    return rows.length > 0;
  }
}
