import { describe, expect, it } from '@jest/globals';
import { compileFlagSet } from './compile-flag.js';
import { evaluateFlagSetJson } from './evaluate-flag.js';
import { strongEtag } from '../conditional-fetch.js';
import { evaluatePlannedJson, planFlagSet, plannedInputs } from './flag-set-plan.js';
import {
  ENVIRONMENTS,
  type EvaluationContext,
  type FlagDefinition,
  type FlagEnvironmentConfig,
  type FlagRule,
  type FlagValueType,
} from './flag-types.js';

function rule(name: string, value: string, extra: Partial<FlagRule> = {}): FlagRule {
  return {
    id: `r-${name}`,
    name,
    priority: 0,
    isActive: true,
    conditions: [],
    rolloutPercentage: null,
    value,
    ...extra,
  };
}

function flag(
  key: string,
  valueType: FlagValueType,
  production: Partial<FlagEnvironmentConfig> & { value: string },
  staging: Partial<FlagEnvironmentConfig> = {},
): FlagDefinition {
  const off: FlagEnvironmentConfig = { enabled: false, value: production.value, rules: [] };
  return {
    id: `id-${key}`,
    key,
    valueType,
    defaultValue: valueType === 'boolean' ? 'false' : production.value,
    environments: {
      production: { enabled: true, rules: [], ...production },
      staging: { ...off, ...staging },
      development: off,
    },
  };
}

const beta = { attribute: 'custom.plan', operator: 'equals', value: 'beta' } as const;
const modern = { attribute: 'app_version', operator: 'greater_than_or_equal', value: '2.0' } as const;

const definitions: FlagDefinition[] = [
  flag('plain', 'string', { value: 'fixed "text"' }),
  flag('off', 'boolean', { enabled: false, value: 'true' }),
  flag('always', 'integer', { value: '1', rules: [rule('everyone', '2'), rule('never reached', '3')] }),
  flag('half', 'boolean', { value: 'false', rules: [rule('half', 'true', { rolloutPercentage: 50 })] }),
  flag('targeted', 'json', { value: '{"a":1}', rules: [rule('beta', '{"a":2}', { conditions: [beta] })] }),
  flag('broken', 'integer', { value: 'twelve' }),
  // Needs `half` on: differs by device; needs `plain` as it is: fixed, known to every device.
  flag('dependent', 'boolean', {
    value: 'true',
    prerequisites: [
      { flagKey: 'half', value: 'true' },
      { flagKey: 'plain', value: 'fixed "text"' },
    ],
  }),
  flag('needs-off', 'boolean', { value: 'true', prerequisites: [{ flagKey: 'off', value: 'true' }] }),
  flag(
    'versioned',
    'string',
    { value: 'old', rules: [rule('modern', 'new', { conditions: [modern] })] },
    {
      enabled: true,
      value: 'staging',
      rules: [rule('staging half', 'x', { rolloutPercentage: 30, conditions: [modern] })],
    },
  ),
];

const contexts: EvaluationContext[] = [
  {},
  { deviceId: 'device-1' },
  { deviceId: 'device-2', appVersion: '2.1', custom: { plan: 'beta' } },
  { deviceId: 'device-3', appVersion: '1.9', country: 'DE', locale: 'de' },
  ...Array.from({ length: 60 }, (_, i) => ({ deviceId: `d-${i}`, appVersion: `${i % 4}.0` })),
];

describe('flag set plans', () => {
  const set = compileFlagSet(definitions);
  const plan = planFlagSet(set);

  it('serves byte for byte what the full evaluation serves, in every environment', () => {
    for (const environment of ENVIRONMENTS) {
      for (const context of contexts) {
        expect(evaluatePlannedJson(plan, environment, context)).toBe(evaluateFlagSetJson(set, environment, context));
      }
    }
  });

  it('serialises fixed flags once and evaluates only what varies by device', () => {
    const parts = plan.environments.production.parts;
    const evaluated = parts.filter((part) => typeof part !== 'string').map((part) => part.key);
    // A flag with prerequisites is evaluated even when they name fixed flags only.
    expect(evaluated.sort()).toEqual(['dependent', 'half', 'needs-off', 'targeted', 'versioned']);
    const fixed = parts.filter((part) => typeof part === 'string').join(',');
    expect(JSON.parse(`{${fixed}}`)).toEqual({ plain: 'fixed "text"', off: false, always: 2 });
    // Staging: everything off but `versioned`, whose rollout makes it depend on the device.
    expect(plan.environments.staging.parts.filter((part) => typeof part !== 'string')).toHaveLength(1);
    expect(plan.environments.development.parts).toHaveLength(1);
  });

  it('names the inputs that decide an answer, and only those', () => {
    const inputs = (environment: 'production' | 'staging' | 'development', context: EvaluationContext) =>
      plannedInputs(plan, environment, context);
    const base = { deviceId: 'device-1', appVersion: '2.1', custom: { plan: 'beta' }, country: 'DE' };
    expect(inputs('production', base)).toBe(inputs('production', { ...base, country: 'FR', locale: 'fr' }));
    expect(inputs('production', base)).not.toBe(inputs('production', { ...base, deviceId: 'device-2' }));
    expect(inputs('production', base)).not.toBe(inputs('production', { ...base, appVersion: '1.0' }));
    expect(inputs('production', base)).not.toBe(inputs('production', { ...base, custom: { plan: 'free' } }));
    expect(inputs('production', base)).not.toBe(inputs('staging', base));
    // One way to read the text back: no value can pass for another value, or for a missing one.
    expect(inputs('production', { ...base, appVersion: '2.1\n-' })).not.toBe(
      inputs('production', { ...base, appVersion: '2.1' }),
    );
    expect(inputs('production', { ...base, appVersion: '-' })).not.toBe(
      inputs('production', { ...base, appVersion: undefined }),
    );
    // Nor once digested as UTF-8, which turns every lone surrogate into U+FFFD.
    const tags = ['\ud800', '\ud801', '\ufffd'].map((appVersion) =>
      strongEtag(inputs('production', { ...base, appVersion })),
    );
    expect(new Set(tags).size).toBe(3);
    // Development serves fixed values only: every device has the same inputs there.
    expect(inputs('development', base)).toBe(inputs('development', { deviceId: 'other' }));
    // Equal inputs, equal answers.
    for (const environment of ENVIRONMENTS) {
      const byInputs = new Map<string, string>();
      for (const context of contexts) {
        const key = inputs(environment, context);
        const answer = evaluatePlannedJson(plan, environment, context);
        expect(byInputs.get(key) ?? answer).toBe(answer);
        byInputs.set(key, answer);
      }
    }
  });

  it('plans an app without flags as an empty object', () => {
    expect(evaluatePlannedJson(planFlagSet([]), 'production', {})).toBe('{}');
  });
});
