/* eslint-disable @typescript-eslint/require-await -- in-memory fakes answer at once, behind the repositories' promise signatures */
import type { SessionData } from 'express-session';
import type { OrganizationId } from '../../src/common/access/tenant-id.js';
import { AuthToken, type TokenPurpose } from '../../src/auth/auth-token.entity.js';
import type { AuthTokensRepository, NewAuthToken } from '../../src/auth/auth-tokens.repository.js';
import type {
  CliSessionRecord,
  CliSessionState,
  CliSessionsRepository,
} from '../../src/auth/cli-login/cli-sessions.repository.js';
import type { ServiceSecretsRepository } from '../../src/auth/service-secrets.repository.js';
import type { SessionsRepository } from '../../src/auth/session/sessions.repository.js';
import type { Public } from './users.js';

/** In-memory `sessions`: data and expiry by session id, with the user each belongs to. */
export class FakeSessionsRepository implements Public<SessionsRepository> {
  readonly rows = new Map<string, { userId: string | null; data: SessionData; expiresAt: Date }>();

  async find(sid: string): Promise<SessionData | null> {
    const row = this.rows.get(sid);
    return row && row.expiresAt.getTime() > Date.now() ? row.data : null;
  }

  async save(sid: string, userId: string | null, data: SessionData, expiresAt: Date): Promise<void> {
    this.rows.set(sid, { userId, data, expiresAt });
  }

  async delete(sid: string): Promise<void> {
    this.rows.delete(sid);
  }

  async extend(sid: string, expiresAt: Date): Promise<void> {
    const row = this.rows.get(sid);
    if (row) row.expiresAt = expiresAt;
  }

  async deleteForUsers(userIds: readonly string[]): Promise<void> {
    for (const [sid, row] of this.rows) if (row.userId && userIds.includes(row.userId)) this.rows.delete(sid);
  }

  /** The session ids of a user. */
  of(userId: string): string[] {
    return [...this.rows].filter(([, row]) => row.userId === userId).map(([sid]) => sid);
  }
}

/** Stored secrets, generated once per key. */
export class FakeServiceSecretsRepository implements Public<ServiceSecretsRepository> {
  readonly values = new Map<string, string>();

  async secret(key: 'session_secret' | 'sso_secret_key', generate: () => string): Promise<string> {
    if (!this.values.has(key)) this.values.set(key, generate());
    return this.values.get(key)!;
  }
}

/** In-memory `auth_tokens`. */
export class FakeAuthTokensRepository implements Public<AuthTokensRepository> {
  readonly rows: AuthToken[] = [];

  async insert(token: NewAuthToken): Promise<void> {
    this.rows.push(
      Object.assign(new AuthToken(), {
        ...token,
        id: `token-${this.rows.length + 1}`,
        usedAt: null,
        createdAt: new Date(),
      }),
    );
  }

  async activeCount(userId: string, purpose: TokenPurpose): Promise<number> {
    return this.active(userId, purpose).length;
  }

  async secondsUntilOneFrees(userId: string, purpose: TokenPurpose): Promise<number> {
    const active = this.active(userId, purpose);
    if (!active.length) return 1;
    return Math.ceil((Math.min(...active.map((row) => row.expiresAt.getTime())) - Date.now()) / 1000);
  }

  async findLocked(tokenHash: string, purpose: TokenPurpose): Promise<AuthToken | null> {
    return this.rows.find((row) => row.tokenHash === tokenHash && row.purpose === purpose) ?? null;
  }

  async markUsed(id: string): Promise<void> {
    const row = this.rows.find((candidate) => candidate.id === id);
    if (row) row.usedAt = new Date();
  }

  async markAllUsed(userId: string, purpose: TokenPurpose): Promise<void> {
    for (const row of this.rows)
      if (row.userId === userId && row.purpose === purpose && !row.usedAt) row.usedAt = new Date();
  }

  /** Moves every token's expiry by `ms` (negative: into the past). */
  age(ms: number): void {
    for (const row of this.rows) row.expiresAt = new Date(row.expiresAt.getTime() - ms);
  }

  private active(userId: string, purpose: TokenPurpose): AuthToken[] {
    return this.rows.filter(
      (row) => row.userId === userId && row.purpose === purpose && !row.usedAt && row.expiresAt.getTime() > Date.now(),
    );
  }
}

interface StoredCliSession {
  status: CliSessionState;
  userId: string | null;
  organizationId: OrganizationId | null;
  expiresAt: Date;
  userCode: string | null;
  apiKeyId: string | null;
}

/** In-memory `cli_sessions` by id hash. */
export class FakeCliSessionsRepository implements Public<CliSessionsRepository> {
  readonly rows = new Map<string, StoredCliSession>();

  async insert(idHash: string, userCode: string, ttlSeconds: number): Promise<void> {
    this.rows.set(idHash, {
      status: 'pending',
      userId: null,
      organizationId: null,
      expiresAt: new Date(Date.now() + ttlSeconds * 1000),
      userCode,
      apiKeyId: null,
    });
  }

  async find(idHash: string): Promise<CliSessionRecord | null> {
    const row = this.rows.get(idHash);
    if (!row) return null;
    const { apiKeyId: _apiKeyId, ...record } = row;
    return { ...record, expired: row.expiresAt.getTime() <= Date.now() };
  }

  async decide(
    organizationId: OrganizationId,
    idHash: string,
    status: 'approved' | 'denied',
    userId: string | null,
  ): Promise<void> {
    const row = this.rows.get(idHash);
    if (row) Object.assign(row, { status, userId, organizationId });
  }

  async activate(organizationId: OrganizationId, idHash: string, apiKeyId: string): Promise<void> {
    const row = this.rows.get(idHash);
    if (row && row.organizationId === organizationId) Object.assign(row, { status: 'active', apiKeyId });
  }
}
