import { getMetadataStorage } from 'class-validator';

/** What the cache needs of class-validator's metadata storage (0.15: `MetadataStorage`). */
interface Storage {
  getTargetValidationMetadatas(
    target: object,
    schema: string,
    always: boolean,
    strictGroups: boolean,
    groups?: string[],
  ): readonly unknown[];
  groupByPropertyName(metadatas: readonly unknown[]): Record<string, unknown[]>;
  addValidationSchema(...args: unknown[]): void;
  addValidationMetadata(...args: unknown[]): void;
  addConstraintMetadata(...args: unknown[]): void;
}

const INSTALLED = Symbol('attestly.validationMetadataCache');

/**
 * class-validator looks a class's rules up anew on every validation, of every object and nested
 * object: it tests the class against every class that has rules (`instanceof`, so the cost grows
 * with the number of DTOs in the service, a few hundred) and regroups the rules by property. The
 * rules only change when decorators run, as modules load. This remembers each lookup, and its
 * grouping, per class and options until a rule or schema is added, which forgets them all. The
 * answers are class-validator's own: the first lookup for a key calls the original, and nothing
 * class-validator returns is mutated by it (`ValidationExecutor` only reads them). Installed once
 * per process, by `createValidationPipe`.
 */
export function cacheValidationMetadata(storage: Storage = getMetadataStorage()): void {
  const marked = storage as Storage & { [INSTALLED]?: true };
  if (marked[INSTALLED]) return;
  marked[INSTALLED] = true;

  let lookups = new Map<object | string, Map<string, readonly unknown[]>>();
  let groupings = new WeakMap<readonly unknown[], Record<string, unknown[]>>();
  const forget = () => {
    lookups = new Map();
    groupings = new WeakMap();
  };

  const lookup = storage.getTargetValidationMetadatas.bind(storage);
  storage.getTargetValidationMetadatas = (target, schema, always, strictGroups, groups) => {
    const key = `${schema ?? ''}\u0000${always}\u0000${strictGroups}\u0000${groups?.join('\u0000') ?? '-'}`;
    let ofTarget = lookups.get(target);
    if (!ofTarget) lookups.set(target, (ofTarget = new Map<string, readonly unknown[]>()));
    let found = ofTarget.get(key);
    if (!found) ofTarget.set(key, (found = Object.freeze(lookup(target, schema, always, strictGroups, groups))));
    return found;
  };

  const group = storage.groupByPropertyName.bind(storage);
  storage.groupByPropertyName = (metadatas) => {
    // Only lookups this cache answered (frozen) are remembered; any other array is grouped afresh.
    if (!Object.isFrozen(metadatas)) return group(metadatas);
    let grouped = groupings.get(metadatas);
    if (!grouped) groupings.set(metadatas, (grouped = group(metadatas)));
    return grouped;
  };

  for (const method of ['addValidationSchema', 'addValidationMetadata', 'addConstraintMetadata'] as const) {
    const add = storage[method].bind(storage);
    storage[method] = (...args: unknown[]) => {
      forget();
      add(...args);
    };
  }
}
