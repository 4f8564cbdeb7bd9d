import { describe, expect, it } from '@jest/globals';
import { compileFlagSet } from './compile-flag.js';
import { evaluateFlagSet, evaluateFlagSetJson } from './evaluate-flag.js';
import type { FlagDefinition, FlagEnvironmentConfig, FlagRule, FlagValueType } from './flag-types.js';

function flag(key: string, valueType: FlagValueType, value: string, rules: FlagRule[] = []): FlagDefinition {
  const production: FlagEnvironmentConfig = { enabled: true, value, rules };
  const off: FlagEnvironmentConfig = { enabled: false, value, rules: [] };
  return {
    id: `id-${key}`,
    key,
    valueType,
    defaultValue: value,
    environments: { production, staging: off, development: off },
  };
}

const germany: FlagRule = {
  id: 'r1',
  name: 'germany',
  priority: 1,
  isActive: true,
  conditions: [{ attribute: 'country', operator: 'equals', value: 'DE' }],
  rolloutPercentage: null,
  value: '{"layout":"b","weights":[1,2.5],"note":"\\u00e9 \\"quoted\\""}',
};

const definitions = [
  flag('__proto__', 'boolean', 'true'),
  flag('10', 'integer', '42'),
  flag('ratio', 'double', '2.50'),
  flag('title', 'string', 'line\nbreak "and" \\ slash \u2028'),
  flag('layout', 'json', '{"layout":"a"}', [germany]),
  // Stored data that no longer fits its type is left out by both.
  flag('broken', 'integer', 'twelve'),
];

describe('GET /flags as JSON text', () => {
  const set = compileFlagSet(definitions);

  it('is the JSON of the typed values, for every value type, odd keys included', () => {
    for (const context of [{}, { country: 'DE', deviceId: 'd1' }]) {
      const text = evaluateFlagSetJson(set, 'production', context);
      expect(JSON.parse(text)).toEqual({ ...evaluateFlagSet(set, 'production', context) });
    }
    const parsed = JSON.parse(evaluateFlagSetJson(set, 'production', { country: 'DE' })) as Record<string, unknown>;
    expect(Object.getOwnPropertyNames(parsed).sort()).toEqual(['10', '__proto__', 'layout', 'ratio', 'title']);
    expect(parsed.layout).toEqual({ layout: 'b', weights: [1, 2.5], note: 'é "quoted"' });
    expect(parsed['10']).toBe(42);
    expect(parsed.ratio).toBe(2.5);
  });

  it('applies a device override, and ignores one that does not fit the type', () => {
    const overrides = new Map([
      ['id-ratio', [{ deviceKeyId: 'd1', forcedValue: '7.25', expiresAt: null }]],
      ['id-10', [{ deviceKeyId: 'd1', forcedValue: 'not a number', expiresAt: null }]],
    ]);
    const text = evaluateFlagSetJson(set, 'production', { deviceId: 'd1' }, overrides);
    expect(JSON.parse(text)).toEqual({ ...evaluateFlagSet(set, 'production', { deviceId: 'd1' }, overrides) });
    expect((JSON.parse(text) as Record<string, unknown>).ratio).toBe(7.25);
    expect((JSON.parse(text) as Record<string, unknown>)['10']).toBe(42);
  });

  it('is an empty object for an app without flags', () => {
    expect(evaluateFlagSetJson([], 'production', {})).toBe('{}');
  });
});
