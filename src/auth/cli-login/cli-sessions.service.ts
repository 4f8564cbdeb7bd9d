import type { OrganizationId } from '../../common/access/tenant-id.js';
import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import type { ApiKeyScope, Role } from '../../common/access/access.decorator.js';
import { hasRole, type OrgAuthContext } from '../../common/access/auth-context.js';
import { sha256Hex } from '../../common/crypto.js';
import { conflict, gone, notFound } from '../../common/errors/app-exception.js';
import { planAllows } from '../../common/tiers.js';
import type { AppConfig } from '../../config/app-config.js';
import { APP_CONFIG } from '../../config/config.module.js';
import { UnitOfWork } from '../../database/unit-of-work.js';
import { newUserCode } from './user-code.js';
import { ApiKeysService } from '../../api-keys/api-keys.service.js';
import { AuditService } from '../../audit/audit.service.js';
import { OrganizationsService } from '../../organizations/organizations.service.js';
import { UsersService } from '../../users/users.service.js';
import { CliSessionsRepository } from './cli-sessions.repository.js';

export const CLI_SESSION_TTL_SECONDS = 600;

/**
 * Days an expired (or denied) CLI session is kept after its expiry, so a client polling late, or
 * a client restarted with a stale session id, is told `expired` rather than 404. The row goes
 * earlier only with the rest of its history: its user or organization deleted (the foreign keys
 * cascade). Kept as long as an account waits for its hard deletion.
 */
export const CLI_SESSION_RETENTION_DAYS = 30;

export type CliSessionStatus = 'pending' | 'active' | 'expired';

/**
 * Device-code style sign-in for the command-line client. The session id is the client's secret
 * for polling, so only its hash is stored. The key is minted at the first poll after approval,
 * returned that once, and never stored in the clear.
 */
@Injectable()
export class CliSessionsService {
  constructor(
    private readonly uow: UnitOfWork,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly sessions: CliSessionsRepository,
    private readonly apiKeys: ApiKeysService,
    private readonly audit: AuditService,
    private readonly users: UsersService,
    private readonly organizations: OrganizationsService,
  ) {}

  async create() {
    const sessionId = randomUUID();
    const userCode = newUserCode();
    await this.sessions.insert(sha256Hex(sessionId), userCode, CLI_SESSION_TTL_SECONDS);
    return {
      session_id: sessionId,
      user_code: userCode,
      verification_url: `${this.config.baseUrl}/device?session_id=${sessionId}`,
      expires_in: CLI_SESSION_TTL_SECONDS,
    };
  }

  async poll(sessionId: string): Promise<{ status: CliSessionStatus; api_key: string | null; email: string | null }> {
    return this.uow.run(async () => {
      const idHash = sha256Hex(sessionId);
      const session = await this.sessions.find(idHash, { lock: true });
      if (!session) throw notFound('CLI session');
      const email = session.userId ? await this.users.addressOf(session.userId) : null;
      if (session.status === 'active') return { status: 'active', api_key: null, email };
      // An approval is only redeemable within the session's lifetime: past it, no key is minted.
      if (session.status !== 'approved' || session.expired || !session.userId || !session.organizationId) {
        return {
          status: session.expired || session.status === 'denied' ? 'expired' : 'pending',
          api_key: null,
          email: null,
        };
      }
      const scopes = await this.scopesFor(session.userId, session.organizationId);
      const { key, record } = await this.apiKeys.issue(session.organizationId, session.userId, {
        name: 'Command-line client',
        type: 'gpat',
        scopes,
      });
      await this.sessions.activate(session.organizationId, idHash, record.id);
      return { status: 'active', api_key: key, email };
    });
  }

  /** The signed-in user approves (or denies) the session for their active organization. */
  async decide(auth: OrgAuthContext, sessionId: string, approve: boolean): Promise<{ status: string }> {
    return this.uow.run(async () => {
      const idHash = sha256Hex(sessionId);
      const session = await this.sessions.find(idHash, { lock: true });
      if (!session) throw notFound('CLI session');
      if (session.status !== 'pending') throw conflict('This CLI session has already been decided');
      if (session.expired) throw gone('This CLI session has expired', { hint: 'Run the login command again' });
      await this.sessions.decide(auth.organizationId, idHash, approve ? 'approved' : 'denied', auth.caller.userId);
      if (approve) {
        await this.audit.record(auth, {
          organizationId: auth.organizationId,
          action: 'cli_session.approved',
          resourceType: 'cli_session',
        });
      }
      return { status: approve ? 'approved' : 'denied' };
    });
  }

  /**
   * A CLI key acts for its user (a personal key: every request also checks the user's current
   * role): reads for everyone, writes from Member up, claims and team administration for Admins
   * (team administration where the plan allows it, `PLAN_RULES.adminTeamScope`).
   */
  private async scopesFor(userId: string, organizationId: OrganizationId): Promise<ApiKeyScope[]> {
    const user = await this.users.findById(userId);
    const organization = await this.organizations.find(organizationId);
    const membership = await this.organizations.roleOf(organizationId, userId);
    const role: Role = membership ?? (user?.isSuperAdmin ? 'owner' : 'viewer');
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
    if (hasRole(role, 'admin') && planAllows(organization?.serviceTier ?? 'free', 'adminTeamScope'))
      scopes.push('admin:team');
    return scopes;
  }
}
