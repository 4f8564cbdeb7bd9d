import type { AuditRepository, AuditRow } from '../../src/audit/audit.repository.js';
import { AuditService } from '../../src/audit/audit.service.js';

/** The audit log in memory: the entries written, in order. */
export class FakeAuditRepository implements Pick<AuditRepository, 'insert'> {
  readonly rows: AuditRow[] = [];

  insert(row: AuditRow): Promise<void> {
    this.rows.push(row);
    return Promise.resolve();
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
