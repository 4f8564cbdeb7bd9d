import type { CompiledFlag } from './compile-flag.js';
import type { Environment } from './flag-types.js';

/**
 * An app's compiled flags (compileFlagSet's order) with lookups by id and by key, built once per
 * set (the flag store holds one per app): finding a flag or a prerequisite is one map read, never a
 * walk of the set, so evaluating one flag costs its prerequisite chain and not the whole set.
 */
export interface FlagSetIndex {
  readonly flags: readonly CompiledFlag[];
  readonly byId: ReadonlyMap<string, CompiledFlag>;
  /** Each flag's position in `flags`, by key. */
  readonly positionByKey: ReadonlyMap<string, number>;
}

export function indexFlagSet(flags: readonly CompiledFlag[]): FlagSetIndex {
  const byId = new Map<string, CompiledFlag>();
  const positionByKey = new Map<string, number>();
  flags.forEach((flag, position) => {
    byId.set(flag.id, flag);
    positionByKey.set(flag.key, position);
  });
  return { flags, byId, positionByKey };
}

/** The flag of the set with this key, or null. */
export function flagByKey(index: FlagSetIndex, key: string): CompiledFlag | null {
  const position = index.positionByKey.get(key);
  return position === undefined ? null : index.flags[position];
}

/**
 * What a pass over the set in its order serves before reaching position `until`, restricted to
 * what `prerequisites` read: those flags, their own prerequisites, and so on, in the set's order.
 * Only a flag placed before the one that names it counts, as in the pass (a prerequisite placed
 * later, in a stored cycle, has not been served yet and fails), so evaluating these flags in this
 * order gives each the value the whole pass gives it.
 */
export function prerequisiteChain(
  index: FlagSetIndex,
  prerequisites: readonly { readonly flagKey: string }[],
  until: number,
  environment: Environment,
): CompiledFlag[] {
  const positions = new Set<number>();
  const pending: { readonly keys: readonly { readonly flagKey: string }[]; readonly before: number }[] = [
    { keys: prerequisites, before: until },
  ];
  while (pending.length) {
    const { keys, before } = pending.pop()!;
    for (const { flagKey } of keys) {
      const position = index.positionByKey.get(flagKey);
      if (position === undefined || position >= before || positions.has(position)) continue;
      positions.add(position);
      pending.push({ keys: index.flags[position].environments[environment].prerequisites, before: position });
    }
  }
  return [...positions].sort((a, b) => a - b).map((position) => index.flags[position]);
}
