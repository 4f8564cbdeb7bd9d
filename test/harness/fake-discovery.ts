import 'reflect-metadata';
import type { DiscoverableDecorator, DiscoveryService } from '@nestjs/core';

/**
 * A DiscoveryService over plain instances, for unit tests of a service that finds its participants
 * by decorator: it answers with those of `instances()` (read at each call) whose class carries the
 * decorator asked for, as Nest's answers with the application's providers.
 */
export function fakeDiscovery(instances: () => readonly object[]): DiscoveryService {
  const marked = (metadataKey: string) =>
    instances()
      .filter((instance) => Reflect.getMetadata(metadataKey, instance.constructor) !== undefined)
      .map((instance) => ({ instance, metatype: instance.constructor }));
  return {
    getProviders: ({ metadataKey }: { metadataKey: string }) => marked(metadataKey),
    getControllers: () => [],
    getMetadataByDecorator: (decorator: DiscoverableDecorator<unknown>, wrapper: { instance: object }) =>
      Reflect.getMetadata(decorator.KEY, wrapper.instance.constructor) as unknown,
  } as unknown as DiscoveryService;
}
