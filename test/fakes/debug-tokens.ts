import { randomUUID } from 'node:crypto';
import type {
  DebugTokenRow,
  DebugTokensRepository,
  ExchangedDebugToken,
} from '../../src/attestation/debug-tokens.repository.js';

interface StoredDebugToken extends DebugTokenRow {
  organizationId: string;
  appId: string;
  hash: string;
}

/**
 * `debug_tokens` in memory, for DebugTokensService's rules: management per app, the exchange's
 * read by hash and its use recorded only while unrevoked, and the deny set's read of one revoked. `now` is the clock the rows are judged by.
 */
export class FakeDebugTokens implements Pick<
  DebugTokensRepository,
  'listUnrevoked' | 'countLive' | 'insert' | 'revoke' | 'byHash' | 'markUsed' | 'isRevoked'
> {
  readonly rows: StoredDebugToken[] = [];
  /** Apps that refuse debug tokens (`app_debug_tokens_enabled` false). */
  readonly disabledApps = new Set<string>();
  now = () => new Date();

  listUnrevoked(organizationId: string, appId: string): Promise<DebugTokenRow[]> {
    return Promise.resolve(this.of(organizationId, appId).filter((row) => !row.revoked_at));
  }

  countLive(organizationId: string, appId: string): Promise<number> {
    const now = this.now().getTime();
    const live = this.of(organizationId, appId).filter(
      (row) => !row.revoked_at && (!row.expires_at || row.expires_at.getTime() > now),
    );
    return Promise.resolve(live.length);
  }

  insert(
    organizationId: string,
    appId: string,
    token: { name: string; prefix: string; hash: string; createdBy: string | null; expiresAt: Date | string | null },
  ): Promise<DebugTokenRow> {
    const row: StoredDebugToken = {
      id: randomUUID(),
      organizationId,
      appId,
      hash: token.hash,
      name: token.name,
      prefix: token.prefix,
      created_by: token.createdBy,
      expires_at: token.expiresAt === null ? null : new Date(token.expiresAt),
      revoked_at: null,
      last_used_at: null,
      created_at: this.now(),
    };
    this.rows.push(row);
    return Promise.resolve(row);
  }

  revoke(organizationId: string, appId: string, tokenId: string): Promise<(DebugTokenRow & { newly: boolean }) | null> {
    const row = this.of(organizationId, appId).find((candidate) => candidate.id === tokenId);
    if (!row) return Promise.resolve(null);
    const newly = !row.revoked_at;
    row.revoked_at ??= this.now();
    return Promise.resolve({ ...row, newly });
  }

  byHash(hash: string): Promise<ExchangedDebugToken | null> {
    const row = this.rows.find((candidate) => candidate.hash === hash);
    if (!row) return Promise.resolve(null);
    return Promise.resolve({
      id: row.id,
      app_id: row.appId,
      expires_at: row.expires_at,
      revoked_at: row.revoked_at,
      enabled: !this.disabledApps.has(row.appId),
    });
  }

  markUsed(appId: string, tokenId: string): Promise<boolean> {
    const row = this.rows.find((candidate) => candidate.id === tokenId && candidate.appId === appId);
    if (!row || row.revoked_at) return Promise.resolve(false);
    row.last_used_at = this.now();
    return Promise.resolve(true);
  }

  isRevoked(appId: string, tokenId: string): Promise<boolean> {
    return Promise.resolve(this.rows.some((row) => row.id === tokenId && row.appId === appId && row.revoked_at));
  }

  asRepository(): DebugTokensRepository {
    return this as unknown as DebugTokensRepository;
  }

  private of(organizationId: string, appId: string): StoredDebugToken[] {
    return this.rows
      .filter((row) => row.organizationId === organizationId && row.appId === appId)
      .sort((a, b) => b.created_at.getTime() - a.created_at.getTime());
  }
}
