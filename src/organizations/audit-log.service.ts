import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { AuditLog } from '../audit/audit-log.entity.js';

/** Reads an organization's audit log, newest first. */
@Injectable()
export class AuditLogService {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  async page(organizationId: string, page: number, per: number): Promise<{ items: AuditLog[]; total: number }> {
    const [items, total] = await this.dataSource
      .getRepository(AuditLog)
      .createQueryBuilder('audit_logs')
      .where('audit_logs.organization_id = :organizationId', { organizationId })
      .orderBy('audit_logs.created_at', 'DESC')
      .addOrderBy('audit_logs.id', 'DESC')
      .skip((page - 1) * per)
      .take(per)
      .getManyAndCount();
    return { items, total };
  }
}
