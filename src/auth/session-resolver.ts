import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Request } from 'express';
import { DataSource } from 'typeorm';
import type { Role } from '../common/access/access.decorator.js';
import type { SessionCaller } from '../common/access/auth-context.js';
import { membershipJoin, organizationJoin } from '../organizations/organizations.service.js';
import { usersFrom } from '../users/users.service.js';

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
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async resolve(request: Request): Promise<ResolvedSession | null> {
    const session = (request as Partial<Pick<Request, 'session'>>).session;
    const userId = session?.userId;
    if (!session || !userId) return null;
    const organizationId = session.organizationId ?? null;
    const rows: { email: string; is_super_admin: boolean; role: Role | null; org_exists: boolean }[] =
      await this.dataSource.query(
        `SELECT u.email, u.is_super_admin, m.role, (o.id IS NOT NULL) AS org_exists
           FROM ${usersFrom('u')}
           ${organizationJoin('o', '$2', { left: true })}
           ${membershipJoin('m', 'u.id', 'o.id', { left: true })}
          WHERE u.id = $1 AND u.status = 'active' AND u.email_verified_at IS NOT NULL`,
        [userId, organizationId],
      );
    const row = rows[0];
    if (!row) return null;
    const member = row.org_exists && (row.role !== null || row.is_super_admin);
    if (organizationId && !member) {
      // The organization is gone or the membership was removed: keep the session, drop the context.
      session.organizationId = null;
    }
    return {
      caller: {
        kind: 'session',
        userId,
        email: row.email,
        isSuperAdmin: row.is_super_admin,
        role: member ? (row.role ?? 'owner') : null,
      },
      organizationId: member ? organizationId : null,
    };
  }
}
