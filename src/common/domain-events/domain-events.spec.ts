import { describe, expect, it } from '@jest/globals';
import { DomainEvents, type DomainEvent, type DomainEventSubscriber } from './domain-events.js';

interface Named extends DomainEvent {
  readonly type: 'A' | 'B' | 'C';
  n: number;
}

function recorder(handles: Named['type'][]) {
  const received: Named[][] = [];
  const subscriber: DomainEventSubscriber<Named> = {
    handles,
    receive: (events) => {
      received.push([...events]);
      return Promise.resolve();
    },
  };
  return { subscriber, received };
}

describe('DomainEvents', () => {
  it('hands each subscriber the events it handles, in order, once per emission', async () => {
    const bus = new DomainEvents();
    const ab = recorder(['A', 'B']);
    const c = recorder(['C']);
    bus.subscribe(ab.subscriber);
    bus.subscribe(c.subscriber);
    const events: Named[] = [
      { type: 'B', n: 1 },
      { type: 'C', n: 2 },
      { type: 'A', n: 3 },
    ];
    await bus.emit(events);
    expect(ab.received).toEqual([
      [
        { type: 'B', n: 1 },
        { type: 'A', n: 3 },
      ],
    ]);
    expect(c.received).toEqual([[{ type: 'C', n: 2 }]]);
  });

  it('calls no subscriber for an empty emission or for events it does not handle', async () => {
    const bus = new DomainEvents();
    const a = recorder(['A']);
    bus.subscribe(a.subscriber);
    await bus.emit([]);
    await bus.emit([{ type: 'B', n: 1 } as Named]);
    expect(a.received).toEqual([]);
  });

  it('lets a subscriber failure reach the publisher, whose unit of work then rolls back', async () => {
    const bus = new DomainEvents();
    bus.subscribe<Named>({ handles: ['A'], receive: () => Promise.reject(new Error('refused')) });
    await expect(bus.emit([{ type: 'A', n: 1 } as Named])).rejects.toThrow('refused');
  });
});
