import { randomUUID } from 'node:crypto';
import { AuditLog } from '../../src/audit/audit-log.entity.js';
import type { AuditRepository, AuditRow } from '../../src/audit/audit.repository.js';
import { AuditService } from '../../src/audit/audit.service.js';
import type { OrganizationId } from '../../src/common/access/tenant-id.js';
import { pageWindow, type PageQuery } from '../../src/common/pagination.js';

/**
 * The audit log in memory: the entries written, in order (`rows`, as written), and as stored
 * (`stored`, with the id and the time the database would give them; `clock` stamps the time).
 */
export class FakeAuditRepository implements Pick<AuditRepository, 'insert' | 'page'> {
  readonly rows: AuditRow[] = [];
  readonly stored: AuditLog[] = [];
  clock: () => Date = () => new Date();

  insert(row: AuditRow): Promise<void> {
    this.rows.push(row);
    this.stored.push(
      Object.assign(new AuditLog(), { ...structuredClone(row), id: randomUUID(), createdAt: this.clock() }),
    );
    return Promise.resolve();
  }

  /** One page of the organization's log, newest first (ties by id, descending), as the SQL reads it. */
  page(organizationId: OrganizationId, query: PageQuery): Promise<{ items: AuditLog[]; total: number }> {
    const { limit, offset } = pageWindow(query);
    const owned = this.stored
      .filter((entry) => entry.organizationId === organizationId)
      .sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime() || b.id.localeCompare(a.id));
    return Promise.resolve({ items: owned.slice(offset, offset + limit), total: owned.length });
  }

  /** The actions recorded, in order. */
  actions(): string[] {
    return this.rows.map((row) => row.action);
  }
}

/** An AuditService writing to `repository`. */
export function fakeAudit(repository = new FakeAuditRepository()): { audit: AuditService; log: FakeAuditRepository } {
  return { audit: new AuditService(repository as unknown as AuditRepository), log: repository };
}
