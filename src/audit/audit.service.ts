import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';
import { actorOf, type AuthContext } from '../common/access/auth-context.js';
import { pageWindow, type PageQuery } from '../common/pagination.js';
import { AuditLog } from './audit-log.entity.js';

export interface AuditEntry {
  organizationId: string;
  action: string;
  resourceType: string;
  resourceId?: string | null;
  metadata?: Record<string, unknown>;
}

/**
 * The owner of `audit_logs`: writes entries (pass the transaction's manager so an entry commits
 * with its change) and reads an organization's log.
 */
@Injectable()
export class AuditService {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** One page of the organization's audit log, newest first. */
  async page(organizationId: string, query: PageQuery): Promise<{ items: AuditLog[]; total: number }> {
    const { limit, offset } = pageWindow(query);
    const [items, total] = await this.dataSource
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

  async record(auth: AuthContext | null, entry: AuditEntry, manager: EntityManager = this.dataSource.manager) {
    const actor = auth ? actorOf(auth) : { userId: null, email: null };
    await manager.query(
      `INSERT INTO audit_logs (organization_id, actor_user_id, actor_email, action, resource_type, resource_id, metadata, ip_address)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
      [
        entry.organizationId,
        actor.userId,
        actor.email,
        entry.action,
        entry.resourceType,
        entry.resourceId ?? null,
        JSON.stringify(entry.metadata ?? {}),
        auth?.ipAddress ?? null,
      ],
    );
  }
}
