import { Injectable } from '@nestjs/common';
import { actorOf, type AuthContext } from '../common/access/auth-context.js';
import type { OrganizationId } from '../common/access/tenant-id.js';
import type { PageQuery } from '../common/pagination.js';
import type { AuditLog } from './audit-log.entity.js';
import { AuditRepository } from './audit.repository.js';

export interface AuditEntry {
  organizationId: OrganizationId;
  action: string;
  resourceType: string;
  resourceId?: string | null;
  metadata?: Record<string, unknown>;
}

/**
 * The organization audit log: records entries in the caller's unit of work (so an entry commits
 * with its change) and reads an organization's log.
 */
@Injectable()
export class AuditService {
  constructor(private readonly entries: AuditRepository) {}

  /** One page of the organization's audit log, newest first. */
  page(organizationId: OrganizationId, query: PageQuery): Promise<{ items: AuditLog[]; total: number }> {
    return this.entries.page(organizationId, query);
  }

  /** Records `entry` as done by `auth`'s caller, in the open unit of work. */
  async record(auth: AuthContext | null, entry: AuditEntry): Promise<void> {
    const actor = auth ? actorOf(auth) : { userId: null, email: null };
    await this.entries.insert({
      organizationId: entry.organizationId,
      actorUserId: actor.userId,
      actorEmail: actor.email,
      action: entry.action,
      resourceType: entry.resourceType,
      resourceId: entry.resourceId ?? null,
      metadata: entry.metadata ?? {},
      ipAddress: auth?.ipAddress ?? null,
    });
  }
}
