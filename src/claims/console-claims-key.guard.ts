import { Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { InjectDataSource } from '@nestjs/typeorm';
import type { Request } from 'express';
import { DataSource } from 'typeorm';
import { ACCESS_KEY, ROLES, type AccessRule, type Role } from '../common/access/access.decorator.js';
import { hasRole } from '../common/access/auth-context.js';
import { forbidden } from '../common/errors/app-exception.js';
import { queryRows } from '../database/sql.js';
import { consoleKeyRefused } from './claims.exceptions.js';

const CONSOLE_KEY_PREFIX = /^(gpat|aat)_/;

/**
 * Narrows the API keys the console claims routes accept (after the access guard resolved the
 * caller): only `gpat_` and `aat_` keys. A personal key (`gpat_`) acts as its user, so the
 * route's session role applies to that user's current membership.
 */
@Injectable()
export class ConsoleClaimsKeyGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    @InjectDataSource() private readonly dataSource: DataSource,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const auth = context.switchToHttp().getRequest<Request>().auth;
    if (auth?.caller.kind !== 'apiKey') return true;
    const { caller } = auth;
    if (!CONSOLE_KEY_PREFIX.test(caller.prefix)) throw consoleKeyRefused();
    if (!caller.prefix.startsWith('gpat_') || !caller.userId || !auth.organizationId) return true;
    const rule = this.reflector.getAllAndOverride<AccessRule | undefined>(ACCESS_KEY, [
      context.getHandler(),
      context.getClass(),
    ]);
    const minimum = rule?.session;
    if (!minimum || minimum === 'user') return true;
    const role = await this.roleOf(caller.userId, auth.organizationId);
    if (!hasRole(role, minimum)) throw forbidden(`This action needs the ${minimum} role or higher`);
    return true;
  }

  private async roleOf(userId: string, organizationId: string): Promise<Role | null> {
    const [row] = await queryRows<{ role: string | null; is_super_admin: boolean }>(
      this.dataSource,
      `SELECT m.role, u.is_super_admin
         FROM users u LEFT JOIN memberships m ON m.user_id = u.id AND m.organization_id = $2
        WHERE u.id = $1 AND u.status = 'active'`,
      [userId, organizationId],
    );
    if (!row) return null;
    if (row.is_super_admin) return 'owner';
    return (ROLES as readonly string[]).includes(row.role ?? '') ? (row.role as Role) : null;
  }
}
