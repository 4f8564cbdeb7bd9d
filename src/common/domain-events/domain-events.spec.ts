import { describe, expect, it } from '@jest/globals';
import type { EntityManager } from 'typeorm';
import { DomainEvents, type DomainEvent, type DomainEventSubscriber } from './domain-events.js';

interface Named extends DomainEvent {
  readonly type: 'A' | 'B' | 'C';
  n: number;
}

const manager = {} as EntityManager;

function recorder(handles: Named['type'][]) {
  const received: [EntityManager, Named[]][] = [];
  const subscriber: DomainEventSubscriber<Named> = {
    handles,
    receive: (on, events) => {
      received.push([on, [...events]]);
      return Promise.resolve();
    },
  };
  return { subscriber, received };
}

describe('DomainEvents', () => {
  it('hands each subscriber the events it handles, in order, once per publication, with the manager', async () => {
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
    await bus.publish(manager, events);
    expect(ab.received).toEqual([
      [
        manager,
        [
          { type: 'B', n: 1 },
          { type: 'A', n: 3 },
        ],
      ],
    ]);
    expect(c.received).toEqual([[manager, [{ type: 'C', n: 2 }]]]);
  });

  it('calls no subscriber for an empty publication or for events it does not handle', async () => {
    const bus = new DomainEvents();
    const a = recorder(['A']);
    bus.subscribe(a.subscriber);
    await bus.publish(manager, []);
    await bus.publish(manager, [{ type: 'B', n: 1 } as Named]);
    expect(a.received).toEqual([]);
  });

  it('lets a subscriber failure reach the publisher, whose transaction then rolls back', async () => {
    const bus = new DomainEvents();
    bus.subscribe<Named>({ handles: ['A'], receive: () => Promise.reject(new Error('refused')) });
    await expect(bus.publish(manager, [{ type: 'A', n: 1 } as Named])).rejects.toThrow('refused');
  });
});
