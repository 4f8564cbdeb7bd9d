import { Module } from '@nestjs/common';
import { DomainEvents } from './domain-events.js';

/** One `DomainEvents` for the application: publishers and subscribers import this module. */
@Module({
  providers: [DomainEvents],
  exports: [DomainEvents],
})
export class DomainEventsModule {}
