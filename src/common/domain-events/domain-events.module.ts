import { Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { DomainEvents } from './domain-events.js';

/** One `DomainEvents` for the application: publishers and subscribers import this module. */
@Module({
  imports: [DiscoveryModule],
  providers: [DomainEvents],
  exports: [DomainEvents],
})
export class DomainEventsModule {}
