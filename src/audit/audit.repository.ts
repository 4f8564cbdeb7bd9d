import { Injectable } from '@nestjs/common';
import type { OrganizationId } from '../common/access/tenant-id.js';
import { pageWindow, type PageQuery } from '../common/pagination.js';
import { UnitOfWork } from '../database/unit-of-work.js';
import { AuditLog } from './audit-log.entity.js';

/** One row of `audit_logs` as written. */
export interface AuditRow {
  organizationId: OrganizationId;
  actorUserId: string | null;
  actorEmail: string | null;
  action: string;
  resourceType: string;
  resourceId: string | null;
  metadata: Record<string, unknown>;
  ipAddress: string | null;
}

/** The owner of `audit_logs`. Writes join the open unit of work, so an entry commits with its change. */
@Injectable()
export class AuditRepository {
  constructor(private readonly uow: UnitOfWork) {}

  /** One page of the organization's log, newest first. */
  async page(organizationId: OrganizationId, query: PageQuery): Promise<{ items: AuditLog[]; total: number }> {
    const { limit, offset } = pageWindow(query);
    const [items, total] = await this.uow
      .manager()
      .getRepository(AuditLog)
      .createQueryBuilder('audit_logs')
      .where('audit_logs.organization_id = :organizationId', { organizationId })
      .orderBy('audit_logs.created_at', 'DESC')
      .addOrderBy('audit_logs.id', 'DESC')
      .skip(offset)
      .take(limit)
      .getManyAndCount();
    return { items, total };
  }

  /** Writes `row` in the open unit of work. */
  async insert(row: AuditRow): Promise<void> {
    await this.uow.manager().query(
      `INSERT INTO audit_logs (organization_id, actor_user_id, actor_email, action, resource_type, resource_id, metadata, ip_address)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
      [
        row.organizationId,
        row.actorUserId,
        row.actorEmail,
        row.action,
        row.resourceType,
        row.resourceId,
        JSON.stringify(row.metadata),
        row.ipAddress,
      ],
    );
  }
}
