import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { ApiKeyScope, Role } from '../../common/access/access.decorator.js';
import { hasRole, type OrgAuthContext } from '../../common/access/auth-context.js';
import { sha256Hex } from '../../common/crypto.js';
import { conflict, gone, notFound } from '../../common/errors/app-exception.js';
import { planAllows } from '../../common/tiers.js';
import type { AppConfig } from '../../config/app-config.js';
import { APP_CONFIG } from '../../config/config.module.js';
import { newUserCode } from './user-code.js';
import { ApiKeysService } from '../../api-keys/api-keys.service.js';
import { AuditService } from '../../audit/audit.service.js';
import { membershipJoin, organizationJoin } from '../../organizations/organizations.service.js';
import { usersFrom } from '../../users/users.service.js';

export const CLI_SESSION_TTL_SECONDS = 600;

/**
 * Days an expired (or denied) CLI session is kept after its expiry, so a client polling late, or
 * a client restarted with a stale session id, is told `expired` rather than 404. The row goes
 * earlier only with the rest of its history: its user or organization deleted (the foreign keys
 * cascade). Kept as long as an account waits for its hard deletion.
 */
export const CLI_SESSION_RETENTION_DAYS = 30;

export type CliSessionStatus = 'pending' | 'active' | 'expired';

interface CliSessionRow {
  status: 'pending' | 'approved' | 'active' | 'denied';
  user_id: string | null;
  organization_id: string | null;
  email: string | null;
  expired: boolean;
}

/**
 * Device-code style sign-in for the command-line client. The session id is the client's secret
 * for polling, so only its hash is stored. The key is minted at the first poll after approval,
 * returned that once, and never stored in the clear.
 */
@Injectable()
export class CliSessionsService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly apiKeys: ApiKeysService,
    private readonly audit: AuditService,
  ) {}

  async create() {
    const sessionId = randomUUID();
    const userCode = newUserCode();
    await this.dataSource.query(
      `INSERT INTO cli_sessions (id_hash, user_code, expires_at) VALUES ($1, $2, now() + make_interval(secs => $3))`,
      [sha256Hex(sessionId), userCode, CLI_SESSION_TTL_SECONDS],
    );
    return {
      session_id: sessionId,
      user_code: userCode,
      verification_url: `${this.config.baseUrl}/device?session_id=${sessionId}`,
      expires_in: CLI_SESSION_TTL_SECONDS,
    };
  }

  async poll(sessionId: string): Promise<{ status: CliSessionStatus; api_key: string | null; email: string | null }> {
    return this.dataSource.transaction(async (manager) => {
      const rows: CliSessionRow[] = await manager.query(
        `SELECT s.status, s.user_id, s.organization_id, u.email, s.expires_at <= now() AS expired
           FROM cli_sessions s LEFT JOIN ${usersFrom('u')} ON u.id = s.user_id
          WHERE s.id_hash = $1 FOR UPDATE OF s`,
        [sha256Hex(sessionId)],
      );
      const row = rows[0];
      if (!row) throw notFound('CLI session');
      if (row.status === 'active') return { status: 'active', api_key: null, email: row.email };
      // An approval is only redeemable within the session's lifetime: past it, no key is minted.
      if (row.status !== 'approved' || row.expired || !row.user_id || !row.organization_id) {
        return { status: row.expired || row.status === 'denied' ? 'expired' : 'pending', api_key: null, email: null };
      }
      const { key, record } = await this.apiKeys.issue(manager, row.organization_id, row.user_id, {
        name: 'Command-line client',
        type: 'gpat',
        scopes: await this.scopesFor(manager, row.user_id, row.organization_id),
      });
      await manager.query(`UPDATE cli_sessions SET status = 'active', api_key_id = $2 WHERE id_hash = $1`, [
        sha256Hex(sessionId),
        record.id,
      ]);
      return { status: 'active', api_key: key, email: row.email };
    });
  }

  /** The signed-in user approves (or denies) the session for their active organization. */
  async decide(auth: OrgAuthContext, sessionId: string, approve: boolean): Promise<{ status: string }> {
    return this.dataSource.transaction(async (manager) => {
      const rows: { status: string; expired: boolean }[] = await manager.query(
        `SELECT status, expires_at <= now() AS expired FROM cli_sessions WHERE id_hash = $1 FOR UPDATE`,
        [sha256Hex(sessionId)],
      );
      const row = rows[0];
      if (!row) throw notFound('CLI session');
      if (row.status !== 'pending') throw conflict('This CLI session has already been decided');
      if (row.expired) throw gone('This CLI session has expired', { hint: 'Run the login command again' });
      await manager.query(
        `UPDATE cli_sessions SET status = $2, user_id = $3, organization_id = $4 WHERE id_hash = $1`,
        [sha256Hex(sessionId), approve ? 'approved' : 'denied', auth.caller.userId, auth.organizationId],
      );
      if (approve) {
        await this.audit.record(
          auth,
          { organizationId: auth.organizationId, action: 'cli_session.approved', resourceType: 'cli_session' },
          manager,
        );
      }
      return { status: approve ? 'approved' : 'denied' };
    });
  }

  /**
   * A CLI key acts for its user (a personal key: every request also checks the user's current
   * role): reads for everyone, writes from Member up, claims and team administration for Admins
   * (team administration where the plan allows it, `PLAN_RULES.adminTeamScope`).
   */
  private async scopesFor(
    manager: DataSource['manager'],
    userId: string,
    organizationId: string,
  ): Promise<ApiKeyScope[]> {
    const rows: { role: Role | null; is_super_admin: boolean; service_tier: string }[] = await manager.query(
      `SELECT m.role, u.is_super_admin, o.tier AS service_tier FROM ${usersFrom('u')}
         ${organizationJoin('o', '$2')}
         ${membershipJoin('m', 'u.id', 'o.id', { left: true })}
        WHERE u.id = $1`,
      [userId, organizationId],
    );
    const row = rows[0];
    const role: Role = row?.role ?? (row?.is_super_admin ? 'owner' : 'viewer');
    const scopes: ApiKeyScope[] = [
      'org:read',
      'apps:read',
      'flags:read',
      'claims:read',
      'feedback:read',
      'release_notes:read',
    ];
    if (hasRole(role, 'member')) {
      scopes.push('flags:write', 'feedback:manage', 'feedback:write', 'release_notes:write');
    }
    if (hasRole(role, 'admin')) scopes.push('claims:write');
    if (hasRole(role, 'admin') && planAllows(row.service_tier, 'adminTeamScope')) scopes.push('admin:team');
    return scopes;
  }
}
