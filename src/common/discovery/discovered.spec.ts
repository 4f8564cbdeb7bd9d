import 'reflect-metadata';
import { describe, expect, it } from '@jest/globals';
import { Controller, Injectable, Module } from '@nestjs/common';
import { DiscoveryModule, DiscoveryService, NestFactory } from '@nestjs/core';
import { trustOrganizationId } from '../access/tenant-id.js';
import {
  OrganizationLifecycleService,
  OnOrganizationRemoved,
} from '../../organizations/organization-lifecycle.service.js';
import { OrganizationSource, OrganizationSourcesService } from '../../organizations/organization-sources.service.js';
import { discovered } from './discovered.js';
import { UnitOfWork } from '../../database/unit-of-work.js';
import { FakeUnitOfWork } from '../../../test/fakes/unit-of-work.js';

const Tagged = DiscoveryService.createDecorator<{ name: string }>();

@Injectable()
@Tagged({ name: 'provider' })
class TaggedProvider {}

@Injectable()
class PlainProvider {}

@Controller('tagged')
@Tagged({ name: 'controller' })
class TaggedController {}

@Injectable()
class Finder {
  constructor(readonly discovery: DiscoveryService) {}
}

@Module({ providers: [TaggedProvider], exports: [TaggedProvider] })
class OtherFeature {}

@Module({
  imports: [DiscoveryModule, OtherFeature],
  controllers: [TaggedController],
  providers: [Finder, PlainProvider],
})
class Feature {}

describe('discovered', () => {
  it('finds every provider and controller of the application that carries the decorator, once, with its metadata', async () => {
    const app = await NestFactory.createApplicationContext(Feature, { logger: false });
    try {
      const found = discovered<object, { name: string }>(app.get(Finder).discovery, Tagged);
      expect(found.map(({ instance, metadata }) => [instance.constructor.name, metadata.name])).toEqual([
        ['TaggedProvider', 'provider'],
        ['TaggedController', 'controller'],
      ]);
      expect(found[0].instance).toBe(app.get(TaggedProvider));
    } finally {
      await app.close();
    }
  });
});

// The organizations feature's registries in a real application context: the participants of
// other modules are found by their decorator alone, with no call at start-up.
const calls: string[] = [];

@Injectable()
@OnOrganizationRemoved()
class Invites {
  scheduling(ids: readonly string[]) {
    calls.push(`invites:scheduling:${ids.join()}`);
    return Promise.resolve();
  }
}

@Injectable()
@OnOrganizationRemoved()
class Keys {
  removing(ids: readonly string[]) {
    calls.push(`keys:removing:${ids.join()}`);
    return Promise.resolve();
  }
  afterRemoval(ids: readonly string[]) {
    calls.push(`keys:after:${ids.join()}`);
  }
}

@Injectable()
class NotAParticipant {
  removing() {
    calls.push('not a participant');
    return Promise.resolve();
  }
}

@Injectable()
@OrganizationSource(['monthlyActiveDevices'])
class Usage {
  monthlyActiveDevices(organizationId: string) {
    return Promise.resolve(organizationId === 'org-1' ? 42 : 0);
  }
}

@Module({ providers: [Invites] })
class TeamLike {}

@Module({ providers: [Keys, NotAParticipant, Usage] })
class KeysLike {}

@Module({
  imports: [DiscoveryModule, TeamLike, KeysLike],
  providers: [
    OrganizationLifecycleService,
    OrganizationSourcesService,
    { provide: UnitOfWork, useValue: new FakeUnitOfWork() },
  ],
})
class OrganizationsLike {}

describe('the organizations feature finds its participants by decorator', () => {
  it('calls each participant marked @OnOrganizationRemoved in the phases it implements, and only those', async () => {
    const app = await NestFactory.createApplicationContext(OrganizationsLike, { logger: false });
    try {
      const lifecycle = app.get(OrganizationLifecycleService);
      await lifecycle.scheduling([trustOrganizationId('org-1')]);
      await lifecycle.removing([trustOrganizationId('org-1'), trustOrganizationId('org-2')]);
      await lifecycle.removing([]);
      lifecycle.afterRemoval(['org-1']);
      expect(calls).toEqual(['invites:scheduling:org-1', 'keys:removing:org-1,org-2', 'keys:after:org-1']);

      const sources = app.get(OrganizationSourcesService);
      await expect(sources.monthlyActiveDevices(trustOrganizationId('org-1'))).resolves.toBe(42);
      await expect(sources.primaryApp('org-1')).rejects.toThrow(
        'No feature provides the organization source primaryApp',
      );
    } finally {
      await app.close();
    }
  });
});
