import type { OrganizationId } from '../../src/common/access/tenant-id.js';
import type { EntitlementState } from '../../src/entitlements/entitlement-state.js';
import type { EntitlementsRepository, StoredEntitlement } from '../../src/entitlements/entitlements.repository.js';

type Public<T> = { [K in keyof T]: T[K] };

/** entitlement_events and subject_entitlements in memory, by organization. */
export class FakeEntitlementsRepository implements Public<EntitlementsRepository> {
  readonly events = new Map<string, { fingerprint: string; subjectId: string }>();
  readonly entitlements = new Map<string, StoredEntitlement>();
  readonly lockedSubjects: string[] = [];

  recordEvent(
    organizationId: OrganizationId,
    event: { eventId: string; subjectId: string; payload: unknown; fingerprint: string },
  ): Promise<boolean> {
    const key = `${organizationId}/${event.eventId}`;
    if (this.events.has(key)) return Promise.resolve(false);
    this.events.set(key, { fingerprint: event.fingerprint, subjectId: event.subjectId });
    return Promise.resolve(true);
  }

  event(organizationId: OrganizationId, eventId: string): Promise<{ fingerprint: string; subjectId: string } | null> {
    return Promise.resolve(this.events.get(`${organizationId}/${eventId}`) ?? null);
  }

  lockSubject(organizationId: OrganizationId, subjectId: string): Promise<void> {
    this.lockedSubjects.push(`${organizationId}/${subjectId}`);
    return Promise.resolve();
  }

  find(organizationId: string, subjectId: string): Promise<StoredEntitlement | null> {
    return Promise.resolve(this.entitlements.get(`${organizationId}/${subjectId}`) ?? null);
  }

  save(organizationId: OrganizationId, state: EntitlementState): Promise<StoredEntitlement> {
    const saved = { ...state, updatedAt: new Date() };
    this.entitlements.set(`${organizationId}/${state.subjectId}`, saved);
    return Promise.resolve(saved);
  }
}
