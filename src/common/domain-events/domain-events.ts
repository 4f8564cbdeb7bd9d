import { Injectable, type OnModuleInit } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import { discovered } from '../discovery/discovered.js';

/** A fact a feature announces about a change it made; `type` names it. */
export interface DomainEvent {
  readonly type: string;
}

/**
 * A feature that reacts to other features' events. It receives, inside the publisher's unit of
 * work, the events of one publication it `handles`, in order, and writes through its
 * repositories, which join that unit of work. It must not throw: a subscriber whose work may fail
 * guards it itself (a savepoint in its repository), so that it never fails the change.
 */
export interface DomainEventSubscriber<E extends DomainEvent = DomainEvent> {
  readonly handles: readonly E['type'][];
  receive(events: readonly E[]): Promise<void>;
  /**
   * For a subscriber whose only effect is webhook deliveries: the webhook events it writes for an
   * event of `type`, each only when an active endpoint of the organization listens to it. A
   * publisher that makes its change in one statement (decision 0078) checks the webhooks feature's
   * `webhooks_listening` for them in that statement, and may then skip the publication. Without
   * it, a subscriber keeps every publisher of the types it handles on the transactional path.
   */
  webhooksFor?(type: E['type']): readonly string[];
}

/** Marks a provider as a `DomainEventSubscriber`: DomainEvents hands it the events it handles. */
export const HandlesDomainEvents = DiscoveryService.createDecorator<void>();

/**
 * In-process domain events. A publisher calls `emit` with the events its change causes inside the
 * change's unit of work, so what the subscribers write commits or rolls back with it; subscribers
 * are the providers marked `@HandlesDomainEvents()`, found when this module starts, called in the
 * order their modules were registered. Emitting without a subscriber that handles the events costs nothing.
 */
@Injectable()
export class DomainEvents implements OnModuleInit {
  private subscribers: readonly DomainEventSubscriber[] = [];

  constructor(private readonly discovery: DiscoveryService) {}

  onModuleInit(): void {
    this.subscribers = discovered<DomainEventSubscriber, void>(this.discovery, HandlesDomainEvents).map(
      ({ instance }) => instance,
    );
  }

  /**
   * What publishing an event of `type` may write, when every subscriber of it writes only webhook
   * deliveries for listening endpoints: their webhook events (none when nobody subscribes). Null
   * when some subscriber of `type` writes anything else: the publisher must then `emit`.
   */
  webhooksOnPublishing(type: string): readonly string[] | null {
    const webhooks: string[] = [];
    for (const subscriber of this.subscribers) {
      if (!subscriber.handles.includes(type)) continue;
      if (!subscriber.webhooksFor) return null;
      webhooks.push(...subscriber.webhooksFor(type));
    }
    return webhooks;
  }

  async emit(events: readonly DomainEvent[]): Promise<void> {
    if (!events.length) return;
    for (const subscriber of this.subscribers) {
      const handled = events.filter((event) => subscriber.handles.includes(event.type));
      if (handled.length) await subscriber.receive(handled);
    }
  }
}
