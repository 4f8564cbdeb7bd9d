import type { DomainEvent, DomainEvents } from '../../src/common/domain-events/domain-events.js';

/** The domain events a service on fakes emitted, in order (no subscriber receives them). */
export class RecordedDomainEvents implements Pick<DomainEvents, 'emit'> {
  readonly emitted: DomainEvent[] = [];

  emit(events: readonly DomainEvent[]): Promise<void> {
    this.emitted.push(...events);
    return Promise.resolve();
  }

  asDomainEvents(): DomainEvents {
    return this as unknown as DomainEvents;
  }
}
