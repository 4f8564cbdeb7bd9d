import type { AuditEntry, AuditService } from '../../src/audit/audit.service.js';
import type { AuthContext } from '../../src/common/access/auth-context.js';

/** The audit log as a list: what services on fakes recorded, with the actor's user id. */
export class RecordedAudit implements Pick<AuditService, 'record'> {
  readonly entries: (AuditEntry & { actorUserId: string | null })[] = [];

  record(auth: AuthContext | null, entry: AuditEntry): Promise<void> {
    this.entries.push({ ...entry, actorUserId: auth?.caller.userId ?? null });
    return Promise.resolve();
  }

  /** For a fake savepoint: the function that takes the log back to now. */
  saveState(): () => void {
    const length = this.entries.length;
    return () => void this.entries.splice(length);
  }

  /** The recorded actions, in order. */
  actions(): string[] {
    return this.entries.map((entry) => entry.action);
  }

  asAuditService(): AuditService {
    return this as unknown as AuditService;
  }
}
