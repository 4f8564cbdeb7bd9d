import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Request } from 'express';
import { DataSource } from 'typeorm';
import type { Role } from '../common/access/access.decorator.js';
import type { SessionCaller } from '../common/access/auth-context.js';
import { OrganizationsService, membershipJoin, organizationJoin } from '../organizations/organizations.service.js';
import { usersFrom } from '../users/users.service.js';
import { admission, signInOf, speaksForAccount } from './session/session-admission.js';
import { ssoEnforcedOn } from './sso/sso-enforcement.js';

export interface ResolvedSession {
  caller: SessionCaller;
  organizationId: string | null;
}

/**
 * The signed-in user behind a session cookie, re-read on every request so a disabled account,
 * a removed membership or a deleted organization takes effect at once.
 */
@Injectable()
export class SessionResolver {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly organizations: OrganizationsService,
  ) {}

  async resolve(request: Request): Promise<ResolvedSession | null> {
    const session = (request as Partial<Pick<Request, 'session'>>).session;
    const userId = session?.userId;
    if (!session || !userId) return null;
    const organizationId = session.organizationId ?? null;
    const rows: {
      email: string;
      is_super_admin: boolean;
      role: Role | null;
      org_exists: boolean;
      service_tier: string | null;
      sso_enforce: boolean | null;
    }[] = await this.dataSource.query(
      `SELECT u.email, u.is_super_admin, m.role, (o.id IS NOT NULL) AS org_exists, o.tier AS service_tier,
              c.enforce AS sso_enforce
         FROM ${usersFrom('u')}
         ${organizationJoin('o', '$2', { left: true })}
         ${membershipJoin('m', 'u.id', 'o.id', { left: true })}
         LEFT JOIN sso_connections c ON c.organization_id = o.id
        WHERE u.id = $1 AND u.status = 'active' AND u.email_verified_at IS NOT NULL`,
      [userId, organizationId],
    );
    const row = rows[0];
    if (!row) return null;
    const signIn = signInOf(session);
    // The one gate of what a session may act in (session-admission.ts): every route a session
    // reaches, key minting and CLI approval included, sees only an organization it admits.
    const member =
      row.org_exists &&
      organizationId !== null &&
      admission(signIn, {
        organizationId,
        member: row.role !== null,
        isSuperAdmin: row.is_super_admin,
        ssoEnforced: ssoEnforcedOn(row.sso_enforce, row.service_tier ?? 'free', row.role),
      }).admitted;
    if (organizationId && !member) {
      // The organization is gone, the membership was removed or the sign-in does not admit it
      // (any more): keep the session, drop the context.
      session.organizationId = null;
    }
    // A password session speaks for the account without a query; an SSO session asks which
    // organizations the account belongs to (the one rule: speaksForAccount).
    const forAccount =
      signIn.password ||
      speaksForAccount(
        signIn,
        (await this.organizations.listFor(userId)).map((organization) => organization.id),
      );
    return {
      caller: {
        kind: 'session',
        userId,
        email: row.email,
        isSuperAdmin: row.is_super_admin,
        role: member ? (row.role ?? 'owner') : null,
        speaksForAccount: forAccount,
      },
      organizationId: member ? organizationId : null,
    };
  }
}
