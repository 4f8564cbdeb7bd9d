import { Injectable, type OnModuleInit } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import type { EntityManager } from 'typeorm';
import { discovered } from '../discovery/discovered.js';

/** A fact a feature announces about a change it made; `type` names it. */
export interface DomainEvent {
  readonly type: string;
}

/**
 * A feature that reacts to other features' events. It receives, in the publisher's transaction,
 * the events of one publication it `handles`, in order. It must not throw: a subscriber whose
 * work may fail guards it itself (a savepoint), so that it never fails the change.
 */
export interface DomainEventSubscriber<E extends DomainEvent = DomainEvent> {
  readonly handles: readonly E['type'][];
  receive(manager: EntityManager, events: readonly E[]): Promise<void>;
}

/** Marks a provider as a `DomainEventSubscriber`: DomainEvents hands it the events it handles. */
export const HandlesDomainEvents = DiscoveryService.createDecorator<void>();

/**
 * In-process domain events. A publisher hands the events its change causes to `publish` with the
 * manager of the change's transaction, so they commit or roll back with it; subscribers are the
 * providers marked `@HandlesDomainEvents()`, found when this module starts, called in the order
 * their modules were registered. Publishing without a subscriber that handles the events costs nothing.
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

  async publish(manager: EntityManager, events: readonly DomainEvent[]): Promise<void> {
    if (!events.length) return;
    for (const subscriber of this.subscribers) {
      const handled = events.filter((event) => subscriber.handles.includes(event.type));
      if (handled.length) await subscriber.receive(manager, handled);
    }
  }
}
