import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { AuditLog } from '../audit/audit-log.entity.js';
import { pageWindow, type PageQuery } from '../common/pagination.js';

/** Reads an organization's audit log, newest first. */
@Injectable()
export class AuditLogService {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

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
}
