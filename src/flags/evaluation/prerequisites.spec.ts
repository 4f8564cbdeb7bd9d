import { describe, expect, it } from '@jest/globals';
import { compileFlagSet } from './compile-flag.js';
import { evaluateFlag, evaluateFlagSet } from './evaluate-flag.js';
import { indexFlagSet } from './flag-set-index.js';
import type { FlagDefinition, FlagEnvironmentConfig, FlagPrerequisite, FlagValueType } from './flag-types.js';

function flag(
  key: string,
  valueType: FlagValueType,
  value: string,
  prerequisites: FlagPrerequisite[] = [],
  defaultValue = valueType === 'boolean' ? 'false' : '0',
): FlagDefinition {
  const production: FlagEnvironmentConfig = { enabled: true, value, rules: [], prerequisites };
  const off: FlagEnvironmentConfig = { enabled: false, value, rules: [] };
  return {
    id: `id-${key}`,
    key,
    valueType,
    defaultValue,
    environments: { production, staging: off, development: off },
  };
}

describe('prerequisites in evaluation', () => {
  it('orders a set so every flag follows what it needs, ties by key', () => {
    const set = compileFlagSet([
      flag('a', 'boolean', 'true', [{ flagKey: 'z', value: 'true' }]),
      flag('m', 'boolean', 'true'),
      flag('z', 'boolean', 'true', [{ flagKey: 'm', value: 'true' }]),
      flag('b', 'boolean', 'true'),
    ]);
    expect(set.map((f) => f.key)).toEqual(['b', 'm', 'z', 'a']);
  });

  it('serves the off value down a chain when its root is off, and compares typed values', () => {
    const definitions = [
      flag('root', 'boolean', 'false'),
      flag('mid', 'double', '2.50', [{ flagKey: 'root', value: 'true' }]),
      flag('leaf', 'boolean', 'true', [{ flagKey: 'mid', value: '2.5' }]),
    ];
    expect({ ...evaluateFlagSet(compileFlagSet(definitions), 'production', {}) }).toEqual({
      root: false,
      mid: 0,
      leaf: false,
    });
    definitions[0] = flag('root', 'boolean', 'true');
    const set = compileFlagSet(definitions);
    expect({ ...evaluateFlagSet(set, 'production', {}) }).toEqual({ root: true, mid: 2.5, leaf: true });
    // Overrides count as the prerequisite's value for that device.
    const overrides = new Map([['id-root', [{ deviceKeyId: 'd1', forcedValue: 'false', expiresAt: null }]]]);
    expect({ ...evaluateFlagSet(set, 'production', { deviceId: 'd1' }, overrides) }).toEqual({
      root: false,
      mid: 0,
      leaf: false,
    });
  });

  it('names the failing prerequisite in the trace; without the set, every prerequisite fails', () => {
    const definitions = [
      flag('root', 'boolean', 'false'),
      flag('leaf', 'boolean', 'true', [{ flagKey: 'root', value: 'true' }]),
    ];
    const result = evaluateFlag(
      definitions[1],
      'production',
      {},
      {
        set: indexFlagSet(compileFlagSet(definitions)),
      },
    );
    expect(result).toMatchObject({ resolvedValue: 'false', matchedRule: null, isDefault: true });
    expect(result.trace).toEqual([
      expect.objectContaining({
        prerequisite: 'root',
        matched: false,
        conditions: [{ attribute: 'flag.root', operator: 'equals', expected: 'true', actual: 'false', passed: false }],
      }),
    ]);
    expect(evaluateFlag(definitions[1], 'production', {}).trace[0].prerequisite).toBe('root');
  });

  it('still serves flags caught in a stored cycle, their prerequisites failing', () => {
    const set = compileFlagSet([
      flag('x', 'boolean', 'true', [{ flagKey: 'y', value: 'true' }]),
      flag('y', 'boolean', 'true', [{ flagKey: 'x', value: 'true' }]),
      flag('free', 'boolean', 'true'),
    ]);
    expect(set.map((f) => f.key)).toEqual(['free', 'x', 'y']);
    expect({ ...evaluateFlagSet(set, 'production', {}) }).toEqual({ free: true, x: false, y: false });
  });
});
