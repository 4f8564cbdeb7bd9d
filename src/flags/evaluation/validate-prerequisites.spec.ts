import { describe, expect, it } from '@jest/globals';
import type { FlagDefinition, FlagEnvironmentConfig } from './flag-types.js';
import { dependentsOf, prerequisiteGraphProblem } from './validate-prerequisites.js';

const off: FlagEnvironmentConfig = { enabled: false, value: 'false', rules: [] };
function flag(key: string, needs: string[] = [], staging: string[] = []): Pick<FlagDefinition, 'key' | 'environments'> {
  const env = (keys: string[]) => ({ ...off, prerequisites: keys.map((flagKey) => ({ flagKey, value: 'true' })) });
  return { key, environments: { production: env(needs), staging: env(staging), development: off } };
}

describe('prerequisite graph', () => {
  it('accepts a chain five deep and refuses six', () => {
    const chain = (length: number) =>
      Array.from({ length: length + 1 }, (_, i) => flag(`f${i}`, i < length ? [`f${i + 1}`] : []));
    expect(prerequisiteGraphProblem(chain(5))).toBeNull();
    expect(prerequisiteGraphProblem(chain(6))).toBe('f0: prerequisite chains are at most 5 flags deep');
  });

  it('names a cycle, also one that only closes across environments', () => {
    expect(prerequisiteGraphProblem([flag('a', ['b']), flag('b', ['c']), flag('c', ['a'])])).toBe(
      'prerequisites would form a cycle: a → b → c → a',
    );
    expect(prerequisiteGraphProblem([flag('a', ['a'])])).toBe('prerequisites would form a cycle: a → a');
    expect(prerequisiteGraphProblem([flag('a', ['b']), flag('b', [], ['a'])])).toMatch(/cycle/);
  });

  it('names unknown keys, and lists the dependents of a flag', () => {
    expect(prerequisiteGraphProblem([flag('a', ['ghost'])])).toBe('a: no flag of this app has the key "ghost"');
    const flags = [flag('a', ['c']), flag('b', [], ['c']), flag('c'), flag('d', ['a'])];
    expect(dependentsOf(flags, 'c')).toEqual(['a', 'b']);
    expect(dependentsOf(flags, 'd')).toEqual([]);
  });
});
