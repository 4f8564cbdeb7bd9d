import { prerequisiteKeys } from './compile-flag.js';
import { MAX_PREREQUISITE_DEPTH, type FlagDefinition } from './flag-types.js';

type GraphFlag = Pick<FlagDefinition, 'key' | 'environments'>;

/**
 * What is wrong with the prerequisites of an app's flags taken together, as one sentence, or null:
 * a key that names no flag of the app, a cycle (in any environment, or across them: evaluation
 * uses one order for all), or a chain deeper than MAX_PREREQUISITE_DEPTH.
 */
export function prerequisiteGraphProblem(flags: readonly GraphFlag[]): string | null {
  const needs = new Map(flags.map((flag) => [flag.key, [...new Set(prerequisiteKeys(flag))]]));
  for (const [key, keys] of needs) {
    const unknown = keys.filter((needed) => !needs.has(needed));
    if (unknown.length) return `${key}: no flag of this app has the key ${unknown.map((k) => `"${k}"`).join(', ')}`;
  }
  // Depth-first, remembering each flag's longest chain; a flag met again on the current path is a cycle.
  const depth = new Map<string, number>();
  const onPath: string[] = [];
  const visit = (key: string): string | null => {
    if (depth.has(key)) return null;
    const at = onPath.indexOf(key);
    if (at >= 0) return `prerequisites would form a cycle: ${[...onPath.slice(at), key].join(' → ')}`;
    onPath.push(key);
    let longest = 0;
    for (const needed of needs.get(key) ?? []) {
      const problem = visit(needed);
      if (problem) return problem;
      longest = Math.max(longest, 1 + depth.get(needed)!);
    }
    onPath.pop();
    depth.set(key, longest);
    if (longest > MAX_PREREQUISITE_DEPTH) {
      return `${key}: prerequisite chains are at most ${MAX_PREREQUISITE_DEPTH} flags deep`;
    }
    return null;
  };
  for (const key of [...needs.keys()].sort()) {
    const problem = visit(key);
    if (problem) return problem;
  }
  return null;
}

/** The flags of `flags` that name `key` as a prerequisite in any environment. */
export function dependentsOf(flags: readonly GraphFlag[], key: string): string[] {
  return flags
    .filter((flag) => flag.key !== key && prerequisiteKeys(flag).includes(key))
    .map((flag) => flag.key)
    .sort();
}
