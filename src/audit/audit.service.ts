import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';
import { actorOf, type AuthContext } from '../common/access/auth-context.js';

export interface AuditEntry {
  organizationId: string;
  action: string;
  resourceType: string;
  resourceId?: string | null;
  metadata?: Record<string, unknown>;
}

/** Writes audit entries; pass the transaction's manager so an entry commits with its change. */
@Injectable()
export class AuditService {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

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
