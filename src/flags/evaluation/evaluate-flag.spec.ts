import { describe, expect, it } from '@jest/globals';
import { compileFlag } from './compile-flag.js';
import { applicableOverride, evaluateFlag, evaluateFlagSet } from './evaluate-flag.js';
import type { Environment, FlagDefinition, FlagEnvironmentConfig, FlagRule, FlagValueType } from './flag-types.js';
import { parseFlagValue } from './flag-values.js';

function rule(overrides: Partial<FlagRule> & Pick<FlagRule, 'id' | 'priority'>): FlagRule {
  return {
    name: `rule ${overrides.id}`,
    isActive: true,
    conditions: [],
    rolloutPercentage: null,
    value: 'true',
    ...overrides,
  };
}

function environment(config: Partial<FlagEnvironmentConfig> = {}): FlagEnvironmentConfig {
  return { enabled: true, value: 'false', rules: [], ...config };
}

function flag(
  environments: Partial<Record<Environment, FlagEnvironmentConfig>> = {},
  fields: Partial<Omit<FlagDefinition, 'environments'>> = {},
): FlagDefinition {
  return {
    id: '6f1c1a52-7a4e-4c43-9d1e-2c7f0d6a1b00',
    key: 'new-checkout',
    valueType: 'boolean',
    defaultValue: 'false',
    environments: { production: environment(), staging: environment(), development: environment(), ...environments },
    ...fields,
  };
}

const usOnly = rule({
  id: 'r-us',
  name: 'US users',
  priority: 10,
  conditions: [{ attribute: 'country', operator: 'equals', value: 'US' }],
  value: 'true',
});

describe('evaluateFlag', () => {
  it('returns the full result shape with a trace entry per condition', () => {
    const definition = flag({
      production: environment({
        rules: [
          rule({
            id: 'r-1',
            name: 'Recent iPhones',
            priority: 1,
            conditions: [
              { attribute: 'device_model', operator: 'starts_with', value: 'iPhone' },
              { attribute: 'app_version', operator: 'greater_than_or_equal', value: '2.0' },
            ],
            rolloutPercentage: 50.48,
          }),
        ],
      }),
    });
    expect(
      evaluateFlag(definition, 'production', {
        deviceModel: 'iPhone14,2',
        appVersion: '2.1.0',
        deviceId: 'device-001',
      }),
    ).toEqual({
      flagKey: 'new-checkout',
      flagId: definition.id,
      environment: 'production',
      resolvedValue: 'true',
      valueType: 'boolean',
      matchedRule: 'Recent iPhones',
      isDefault: false,
      trace: [
        {
          ruleName: 'Recent iPhones',
          ruleId: 'r-1',
          priority: 1,
          matched: true,
          rolloutPercentage: 50.48,
          passedRollout: true,
          conditions: [
            {
              attribute: 'device_model',
              operator: 'starts_with',
              expected: 'iPhone',
              actual: 'iPhone14,2',
              passed: true,
            },
            {
              attribute: 'app_version',
              operator: 'greater_than_or_equal',
              expected: '2.0',
              actual: '2.1.0',
              passed: true,
            },
          ],
          value: 'true',
        },
      ],
    });
  });

  it('evaluates rules in ascending priority whatever their stored order', () => {
    const definition = flag(
      {
        production: environment({
          value: 'none',
          rules: [
            rule({ id: 'late', name: 'late', priority: 20, value: 'late' }),
            rule({ id: 'early', name: 'early', priority: 5, value: 'early' }),
            rule({ id: 'middle', name: 'middle', priority: 10, value: 'middle', conditions: usOnly.conditions }),
          ],
        }),
      },
      { valueType: 'string' },
    );
    const result = evaluateFlag(definition, 'production', { country: 'FR' });
    expect(result.trace.map((entry) => entry.ruleId)).toEqual(['early', 'middle', 'late']);
    expect(result.resolvedValue).toBe('early');
    expect(result.matchedRule).toBe('early');
  });

  it('keeps the stored order between rules of equal priority', () => {
    const definition = flag(
      {
        production: environment({
          rules: [rule({ id: 'a', priority: 1, value: 'a' }), rule({ id: 'b', priority: 1, value: 'b' })],
        }),
      },
      { valueType: 'string' },
    );
    expect(evaluateFlag(definition, 'production', {}).resolvedValue).toBe('a');
  });

  it('traces the rules after the first match, each with its own outcome, and serves the first', () => {
    const definition = flag(
      {
        production: environment({
          rules: [
            rule({ id: 'r-us', name: 'US users', priority: 1, conditions: usOnly.conditions, value: 'us' }),
            rule({
              id: 'r-fr',
              name: 'FR users',
              priority: 2,
              conditions: [{ attribute: 'country', operator: 'equals', value: 'FR' }],
              value: 'fr',
            }),
            rule({ id: 'r-all', name: 'everyone', priority: 3, value: 'all' }),
          ],
        }),
      },
      { valueType: 'string' },
    );
    const result = evaluateFlag(definition, 'production', { country: 'US' });
    expect(result.trace.map((entry) => [entry.ruleName, entry.matched])).toEqual([
      ['US users', true],
      ['FR users', false],
      ['everyone', true],
    ]);
    expect(result.matchedRule).toBe('US users');
    expect(result.resolvedValue).toBe('us');
  });

  it('skips inactive rules entirely', () => {
    const definition = flag({
      production: environment({ rules: [rule({ id: 'off', priority: 1, isActive: false, value: 'true' }), usOnly] }),
    });
    const result = evaluateFlag(definition, 'production', { country: 'CA' });
    expect(result.trace.map((entry) => entry.ruleId)).toEqual(['r-us']);
    expect(result).toMatchObject({ resolvedValue: 'false', matchedRule: null, isDefault: true });
  });

  it('reports a missing attribute as actual null and falls through to the environment value', () => {
    const definition = flag({ production: environment({ value: 'false', rules: [usOnly] }) });
    const result = evaluateFlag(definition, 'production', {});
    expect(result.trace[0].conditions).toEqual([
      { attribute: 'country', operator: 'equals', expected: 'US', actual: null, passed: false },
    ]);
    expect(result).toMatchObject({ resolvedValue: 'false', matchedRule: null, isDefault: true });
  });

  it('requires every condition of a rule to pass', () => {
    const definition = flag({
      production: environment({
        rules: [
          rule({
            id: 'both',
            priority: 1,
            conditions: [...usOnly.conditions, { attribute: 'risk_score', operator: 'less_than', value: '50' }],
          }),
        ],
      }),
    });
    expect(evaluateFlag(definition, 'production', { country: 'US', riskScore: 20 }).resolvedValue).toBe('true');
    const risky = evaluateFlag(definition, 'production', { country: 'US', riskScore: 80 });
    expect(risky.resolvedValue).toBe('false');
    expect(risky.trace[0].conditions.map((condition) => condition.passed)).toEqual([true, false]);
  });

  describe('rollout', () => {
    // rolloutBucket('new-checkout', 'device-001') is 50.479 (see rollout-vectors.ts).
    const rolledOut = (rolloutPercentage: number, conditions: FlagRule['conditions'] = []) =>
      flag({ production: environment({ rules: [rule({ id: 'r', priority: 1, rolloutPercentage, conditions })] }) });

    it('includes a device whose bucket is below the percentage', () => {
      expect(evaluateFlag(rolledOut(50.48), 'production', { deviceId: 'device-001' }).trace[0]).toMatchObject({
        matched: true,
        passedRollout: true,
      });
      expect(evaluateFlag(rolledOut(50.479), 'production', { deviceId: 'device-001' }).trace[0]).toMatchObject({
        matched: false,
        passedRollout: false,
      });
    });

    it('leaves a device without an id out of a partial rollout but not out of 100%', () => {
      expect(evaluateFlag(rolledOut(99.999), 'production', {}).trace[0].passedRollout).toBe(false);
      expect(evaluateFlag(rolledOut(100), 'production', {}).trace[0]).toMatchObject({
        matched: true,
        passedRollout: true,
      });
      expect(evaluateFlag(rolledOut(0), 'production', { deviceId: 'device-001' }).trace[0].passedRollout).toBe(false);
    });

    it('shows the rollout outcome even when a condition failed', () => {
      const entry = evaluateFlag(rolledOut(60, usOnly.conditions), 'production', {
        deviceId: 'device-001',
        country: 'FR',
      }).trace[0];
      expect(entry).toMatchObject({ matched: false, passedRollout: true });
    });

    it('reports passedRollout null for a rule without a rollout', () => {
      expect(
        evaluateFlag(flag({ production: environment({ rules: [usOnly] }) }), 'production', {}).trace[0].passedRollout,
      ).toBeNull();
    });
  });

  describe('environments', () => {
    const perEnvironment = flag(
      {
        production: environment({
          value: 'prod',
          rules: [rule({ id: 'p', name: 'prod rule', priority: 1, value: 'prod-rule', conditions: usOnly.conditions })],
        }),
        staging: environment({ value: 'staging' }),
        development: environment({
          enabled: false,
          value: 'dev',
          rules: [rule({ id: 'd', priority: 1, value: 'dev-rule' })],
        }),
      },
      { valueType: 'string', defaultValue: 'off' },
    );

    it('uses the requested environment', () => {
      expect(evaluateFlag(perEnvironment, 'staging', { country: 'US' })).toMatchObject({
        environment: 'staging',
        resolvedValue: 'staging',
      });
      expect(evaluateFlag(perEnvironment, 'production', { country: 'US' })).toMatchObject({
        resolvedValue: 'prod-rule',
      });
    });

    it('serves the default value with an empty trace when the environment is disabled', () => {
      expect(evaluateFlag(perEnvironment, 'development', {})).toMatchObject({
        environment: 'development',
        resolvedValue: 'off',
        matchedRule: null,
        isDefault: true,
        trace: [],
      });
    });

    it("serves an unknown slug production's stored value without running its rules", () => {
      expect(evaluateFlag(perEnvironment, 'prod', { country: 'US' })).toEqual({
        flagKey: 'new-checkout',
        flagId: perEnvironment.id,
        environment: 'production',
        resolvedValue: 'prod',
        valueType: 'string',
        matchedRule: null,
        isDefault: true,
        trace: [],
      });
      const productionOff = flag(
        { production: environment({ enabled: false, value: 'true' }) },
        { defaultValue: 'false' },
      );
      expect(evaluateFlag(productionOff, 'qa', {}).resolvedValue).toBe('false');
    });
  });

  describe('override', () => {
    const definition = flag({ production: environment({ rules: [usOnly] }) });

    it('beats matching rules', () => {
      expect(
        evaluateFlag(definition, 'production', { country: 'US' }, { override: { forcedValue: 'false' } }),
      ).toMatchObject({
        resolvedValue: 'false',
        matchedRule: null,
        isDefault: false,
        trace: [],
      });
    });

    it('beats a disabled environment', () => {
      const disabled = flag({ production: environment({ enabled: false }) });
      expect(evaluateFlag(disabled, 'production', {}, { override: { forcedValue: 'true' } }).resolvedValue).toBe(
        'true',
      );
    });

    it('is ignored when its value no longer fits the flag type, or absent', () => {
      expect(
        evaluateFlag(definition, 'production', { country: 'US' }, { override: { forcedValue: 'maybe' } }).matchedRule,
      ).toBe('US users');
      expect(evaluateFlag(definition, 'production', { country: 'US' }, { override: null }).matchedRule).toBe(
        'US users',
      );
    });
  });
});

describe('applicableOverride', () => {
  const now = new Date('2025-06-01T12:00:00Z');

  it('picks the first unexpired override for the device', () => {
    const overrides = [
      { deviceKeyId: 'other', forcedValue: 'a', expiresAt: null },
      { deviceKeyId: 'dev', forcedValue: 'expired', expiresAt: new Date('2025-06-01T11:59:59Z') },
      { deviceKeyId: 'dev', forcedValue: 'expiring-now', expiresAt: now },
      { deviceKeyId: 'dev', forcedValue: 'live', expiresAt: new Date('2025-06-01T12:00:01Z') },
      { deviceKeyId: 'dev', forcedValue: 'forever', expiresAt: null },
    ];
    expect(applicableOverride(overrides, 'dev', now)?.forcedValue).toBe('live');
    expect(applicableOverride(overrides.slice(0, 3), 'dev', now)).toBeNull();
    expect(applicableOverride([], 'dev', now)).toBeNull();
  });
});

describe('evaluateFlagSet', () => {
  const now = new Date('2025-06-01T12:00:00Z');

  function typedFlag(key: string, valueType: FlagValueType, value: string, rules: FlagRule[] = []): FlagDefinition {
    return flag(
      { production: environment({ value, rules }) },
      { id: `id-${key}`, key, valueType, defaultValue: value },
    );
  }

  it('serves typed values keyed by flag key', () => {
    const flags = [
      typedFlag('enabled', 'boolean', 'false', [usOnly]),
      typedFlag('limit', 'integer', '10'),
      typedFlag('ratio', 'double', '0.25'),
      typedFlag('theme', 'string', 'dark'),
      typedFlag('layout', 'json', '{"columns":2}'),
    ].map(compileFlag);
    expect({ ...evaluateFlagSet(flags, 'production', { country: 'US' }) }).toEqual({
      enabled: true,
      limit: 10,
      ratio: 0.25,
      theme: 'dark',
      layout: { columns: 2 },
    });
  });

  it('applies an unexpired override for the device ahead of rules and rollout', () => {
    const flags = [
      typedFlag('a', 'boolean', 'false', [rule({ id: 'r', priority: 1, rolloutPercentage: 100, value: 'true' })]),
      typedFlag('b', 'integer', '1'),
    ].map(compileFlag);
    const overrides = new Map([
      ['id-a', [{ deviceKeyId: 'dev-1', forcedValue: 'false', expiresAt: null }]],
      ['id-b', [{ deviceKeyId: 'dev-1', forcedValue: '5', expiresAt: new Date('2025-06-01T11:00:00Z') }]],
    ]);
    expect({ ...evaluateFlagSet(flags, 'production', { deviceId: 'dev-1' }, overrides, { now }) }).toEqual({
      a: false,
      b: 1,
    });
    expect({ ...evaluateFlagSet(flags, 'production', { deviceId: 'dev-2' }, overrides, { now }) }).toEqual({
      a: true,
      b: 1,
    });
    expect({ ...evaluateFlagSet(flags, 'production', {}, overrides, { now, deviceKeyId: 'dev-1' }) }).toEqual({
      a: false,
      b: 1,
    });
    expect({
      ...evaluateFlagSet(flags, 'production', { deviceId: 'dev-1' }, overrides, { now, deviceKeyId: null }),
    }).toEqual({
      a: true,
      b: 1,
    });
  });

  it('ignores an override whose value no longer fits the type', () => {
    const flags = [compileFlag(typedFlag('limit', 'integer', '3'))];
    const overrides = new Map([['id-limit', [{ deviceKeyId: 'dev', forcedValue: 'lots', expiresAt: null }]]]);
    expect(evaluateFlagSet(flags, 'production', { deviceId: 'dev' }, overrides).limit).toBe(3);
  });

  it('leaves out a flag whose served value no longer fits its type', () => {
    const flags = [compileFlag(typedFlag('broken', 'integer', 'ten')), compileFlag(typedFlag('fine', 'integer', '10'))];
    expect(Object.keys(evaluateFlagSet(flags, 'production', {}))).toEqual(['fine']);
  });

  it('uses the same environment fallbacks as evaluateFlag', () => {
    const definition = flag(
      {
        production: environment({ value: 'prod', rules: [rule({ id: 'r', priority: 1, value: 'rule' })] }),
        staging: environment({ enabled: false, value: 'staging' }),
      },
      { valueType: 'string', defaultValue: 'default' },
    );
    const flags = [compileFlag(definition)];
    expect(evaluateFlagSet(flags, 'production', {})['new-checkout']).toBe('rule');
    expect(evaluateFlagSet(flags, 'staging', {})['new-checkout']).toBe('default');
    expect(evaluateFlagSet(flags, 'nowhere', {})['new-checkout']).toBe('prod');
  });

  it('agrees with evaluateFlag on every context', () => {
    const definition = flag(
      {
        production: environment({
          value: 'base',
          rules: [
            rule({
              id: 'beta',
              priority: 1,
              conditions: [{ attribute: 'app_version', operator: 'less_than', value: '2.0-beta.5' }],
              value: 'old',
            }),
            rule({ id: 'us', priority: 2, conditions: usOnly.conditions, rolloutPercentage: 40, value: 'us-40' }),
            rule({
              id: 'risky',
              priority: 3,
              conditions: [{ attribute: 'risk_score', operator: 'greater_than', value: '70' }],
              value: 'risky',
            }),
            rule({
              id: 'gold',
              priority: 4,
              conditions: [{ attribute: 'custom.plan', operator: 'in_list', value: 'gold,platinum' }],
              value: 'gold',
            }),
          ],
        }),
      },
      { valueType: 'string' },
    );
    const compiled = [compileFlag(definition)];
    const versions = [undefined, '1.9', '2.0-beta.4', '2.0', '3.1'];
    const countries = [undefined, 'US', 'FR'];
    for (let i = 0; i < 300; i++) {
      const context = {
        appVersion: versions[i % versions.length],
        country: countries[i % countries.length],
        riskScore: i % 7 === 0 ? undefined : (i * 13) % 100,
        deviceId: i % 11 === 0 ? undefined : `device-${i}`,
        custom: { plan: i % 2 === 0 ? 'gold' : 'free' },
      };
      const expected = parseFlagValue('string', evaluateFlag(definition, 'production', context).resolvedValue);
      expect(expected.ok && expected.value).toBe(evaluateFlagSet(compiled, 'production', context)['new-checkout']);
    }
  });

  it('treats a flag keyed __proto__ as an ordinary entry', () => {
    const values = evaluateFlagSet([compileFlag(typedFlag('__proto__', 'string', 'x'))], 'production', {});
    expect(Object.keys(values)).toEqual(['__proto__']);
    expect(JSON.stringify(values)).toBe('{"__proto__":"x"}');
  });

  it('hands out JSON values that cannot be altered for later requests', () => {
    const flags = [compileFlag(typedFlag('layout', 'json', '{"columns":[1,2]}'))];
    const first = evaluateFlagSet(flags, 'production', {}).layout as { columns: number[] };
    expect(() => first.columns.push(3)).toThrow(TypeError);
    expect(evaluateFlagSet(flags, 'production', {}).layout).toEqual({ columns: [1, 2] });
  });
});
