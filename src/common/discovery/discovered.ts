import type { DiscoverableDecorator, DiscoveryService } from '@nestjs/core';

/** A provider carrying a discoverable decorator, with what the decorator was given. */
export interface Discovered<I, M> {
  readonly instance: I;
  readonly metadata: M;
}

/**
 * The providers and controllers of the application that carry `decorator`, in the order Nest
 * registered their modules, each once. A feature that takes part in another feature's work
 * declares it on its class (`@OnOrganizationRemoved()`, `@DenySetSource(…)`): the owner of the
 * work finds it here when its module starts, so nobody registers anything at start-up, and the
 * participant's import of the decorator shows the dependency.
 */
export function discovered<I, M>(discovery: DiscoveryService, decorator: DiscoverableDecorator<M>): Discovered<I, M>[] {
  const found: Discovered<I, M>[] = [];
  const seen = new Set<unknown>();
  const wrappers = [
    ...discovery.getProviders({ metadataKey: decorator.KEY }),
    ...discovery.getControllers({ metadataKey: decorator.KEY }),
  ];
  for (const wrapper of wrappers) {
    const instance = wrapper.instance as I | undefined;
    if (!instance || seen.has(instance)) continue;
    seen.add(instance);
    found.push({ instance, metadata: discovery.getMetadataByDecorator(decorator, wrapper) as M });
  }
  return found;
}

/**
 * The reads that discovered providers implement, by name: each provider lists the names it
 * provides (methods of the same names, bound to it). A name provided twice, or listed by a provider
 * without that method, throws, so a wrong wiring fails the start rather than a request.
 */
export function providedSources<S extends object>(
  what: string,
  providers: readonly Discovered<Partial<S>, readonly (keyof S)[]>[],
): Partial<S> {
  const sources: Partial<S> = {};
  for (const { instance, metadata } of providers) {
    for (const name of metadata) {
      if (sources[name]) throw new Error(`The ${what} ${String(name)} is provided twice`);
      const read = instance[name];
      if (typeof read !== 'function') {
        throw new Error(`${instance.constructor.name} is marked as the ${what} ${String(name)} without that method`);
      }
      sources[name] = (read as (...args: unknown[]) => unknown).bind(instance) as S[keyof S];
    }
  }
  return sources;
}
