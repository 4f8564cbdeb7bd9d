import { describe, expect, it } from '@jest/globals';
import { fakeDiscovery } from '../../../test/harness/fake-discovery.js';
import { DomainEvents, HandlesDomainEvents, type DomainEvent, type DomainEventSubscriber } from './domain-events.js';

interface Named extends DomainEvent {
  readonly type: 'A' | 'B' | 'C';
  n: number;
}

@HandlesDomainEvents()
class Subscriber implements DomainEventSubscriber<Named> {
  constructor(
    readonly handles: Named['type'][],
    readonly receive: DomainEventSubscriber<Named>['receive'],
  ) {}
}

function recorder(handles: Named['type'][]) {
  const received: Named[][] = [];
  const subscriber = new Subscriber(handles, (events) => {
    received.push([...events]);
    return Promise.resolve();
  });
  return { subscriber, received };
}

/** The bus of an application whose providers are these: it keeps those marked @HandlesDomainEvents. */
function busOf(...providers: object[]): DomainEvents {
  const bus = new DomainEvents(fakeDiscovery(() => providers));
  bus.onModuleInit();
  return bus;
}

describe('DomainEvents', () => {
  it('hands each subscriber the events it handles, in order, once per emission', async () => {
    const ab = recorder(['A', 'B']);
    const c = recorder(['C']);
    const unmarked = { handles: ['A', 'B', 'C'], receive: () => Promise.reject(new Error('not a subscriber')) };
    const bus = busOf(ab.subscriber, unmarked, c.subscriber);
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
    const a = recorder(['A']);
    const bus = busOf(a.subscriber);
    await bus.emit([]);
    await bus.emit([{ type: 'B', n: 1 } as Named]);
    expect(a.received).toEqual([]);
  });

  it('lets a subscriber failure reach the publisher, whose unit of work then rolls back', async () => {
    const bus = busOf(new Subscriber(['A'], () => Promise.reject(new Error('refused'))));
    await expect(bus.emit([{ type: 'A', n: 1 } as Named])).rejects.toThrow('refused');
  });
  it('says what a publication may write only when every subscriber of its type writes webhook deliveries alone', () => {
    const webhooksOnly = Object.assign(recorder(['A', 'B']).subscriber, {
      webhooksFor: (type: Named['type']) =>
        type === 'A' ? ['device.new', 'device.attested.first'] : ['device.high_risk'],
    });
    const other = recorder(['B']).subscriber;
    const bus = busOf(webhooksOnly, other);
    expect(bus.webhooksOnPublishing('A')).toEqual(['device.new', 'device.attested.first']);
    // B is also handled by a subscriber that writes something else: the publisher must emit.
    expect(bus.webhooksOnPublishing('B')).toBeNull();
    // Nobody handles C: publishing it writes nothing.
    expect(bus.webhooksOnPublishing('C')).toEqual([]);
  });
});
