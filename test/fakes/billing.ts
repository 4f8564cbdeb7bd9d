import type { OrganizationId } from '../../src/common/access/tenant-id.js';
import type { BillingEventRow, BillingEventsRepository } from '../../src/billing/billing-events.repository.js';

type Public<T> = { [K in keyof T]: T[K] };

/** billing_events in memory. */
export class FakeBillingEventsRepository implements Public<BillingEventsRepository> {
  readonly events: BillingEventRow[] = [];

  record(event: BillingEventRow): Promise<boolean> {
    if (this.events.some((e) => e.eventId === event.eventId)) return Promise.resolve(false);
    this.events.push(event);
    return Promise.resolve(true);
  }

  appliedAfter(organizationId: OrganizationId, createdAt: Date): Promise<boolean> {
    return Promise.resolve(
      this.events.some(
        (e) =>
          e.organizationId === organizationId && e.outcome === 'applied' && e.createdAt.getTime() > createdAt.getTime(),
      ),
    );
  }
}
