import { describe, expect, it } from '@jest/globals';
import { compileFlagSet } from '../flags/evaluation/compile-flag.js';
import { evaluateFlagSet } from '../flags/evaluation/evaluate-flag.js';
import type { FlagDefinition, FlagEnvironmentConfig, FlagRule } from '../flags/evaluation/flag-types.js';
import { rolloutBucket } from '../flags/evaluation/rollout.js';
import type { AppFlagSet } from '../flags/index.js';
import { parseOfrepRequest, type OfrepEvaluationRequest } from './ofrep-context.js';
import { evaluateOfrep, evaluateOfrepAll, findFlag } from './ofrep-evaluation.js';
import { planFlagSet } from '../flags/evaluation/flag-set-plan.js';

const off: FlagEnvironmentConfig = { enabled: false, value: 'false', rules: [] };

function definition(
  key: string,
  production: Partial<FlagEnvironmentConfig>,
  fields: Partial<FlagDefinition> = {},
): FlagDefinition {
  return {
    id: `id-${key}`,
    key,
    valueType: 'boolean',
    defaultValue: 'false',
    environments: { production: { ...off, enabled: true, ...production }, staging: off, development: off },
    ...fields,
  };
}

function rule(name: string, fields: Partial<FlagRule> = {}): FlagRule {
  return {
    id: `rule-${name}`,
    name,
    priority: 1,
    isActive: true,
    conditions: [],
    rolloutPercentage: null,
    value: 'true',
    ...fields,
  };
}

function setOf(definitions: FlagDefinition[], overrides: AppFlagSet['overridesByDevice'] = new Map()): AppFlagSet {
  const flags = compileFlagSet(definitions);
  return { flags, plan: planFlagSet(flags), version: 'v1', overridesByDevice: overrides };
}

function request(context: Record<string, unknown>, deviceId = 'device-1'): OfrepEvaluationRequest {
  return parseOfrepRequest({ context }, { kind: 'device', deviceId, riskScore: null }) as OfrepEvaluationRequest;
}

const proOnly = rule('pro plan', { conditions: [{ attribute: 'custom.plan', operator: 'equals', value: 'pro' }] });

describe('evaluateOfrep', () => {
  it('maps each outcome of the kernel to a reason and a variant', () => {
    const set = setOf([
      definition('static', { value: 'true' }),
      definition('targeted', { rules: [proOnly] }),
      definition('disabled', { enabled: false }, { defaultValue: 'true' }),
    ]);
    const of = (key: string, context: Record<string, unknown> = {}) =>
      evaluateOfrep(set, findFlag(set, key)!, request(context));
    expect(of('static')).toEqual({
      key: 'static',
      value: true,
      reason: 'STATIC',
      variant: 'value',
      metadata: { environment: 'production', valueType: 'boolean' },
    });
    expect(of('targeted', { plan: 'pro' })).toMatchObject({
      value: true,
      reason: 'TARGETING_MATCH',
      variant: 'pro plan',
      metadata: { ruleId: 'rule-pro plan' },
    });
    expect(of('targeted', { plan: 'free' })).toMatchObject({ value: false, reason: 'DEFAULT', variant: 'value' });
    expect(of('disabled')).toMatchObject({ value: true, reason: 'DISABLED', variant: 'off' });
  });

  it('says SPLIT for a partial rollout that takes the device in, by the kernel bucket', () => {
    const set = setOf([definition('beta', { rules: [rule('half', { rolloutPercentage: 50 })] })]);
    for (const deviceId of ['d-1', 'd-2', 'd-3', 'd-4', 'd-5', 'd-6']) {
      const inside = rolloutBucket('beta', deviceId) < 50;
      expect(evaluateOfrep(set, set.flags[0], request({}, deviceId))).toMatchObject(
        inside
          ? { value: true, reason: 'SPLIT', metadata: { rolloutPercentage: 50 } }
          : { value: false, reason: 'DEFAULT' },
      );
    }
    // A full rollout is plain targeting.
    const full = setOf([definition('all', { rules: [rule('all', { rolloutPercentage: 100 })] })]);
    expect(evaluateOfrep(full, full.flags[0], request({}))).toMatchObject({ reason: 'TARGETING_MATCH' });
  });

  it("applies the device's override, to the flag and to its prerequisites, as GET /flags does", () => {
    const gate = definition('gate', { value: 'false' });
    const dependent = definition('dependent', { value: 'true', prerequisites: [{ flagKey: 'gate', value: 'true' }] });
    const overrides: AppFlagSet['overridesByDevice'] = new Map([
      ['tester', new Map([['id-gate', [{ deviceKeyId: 'tester', forcedValue: 'true', expiresAt: null }]]])],
    ]);
    const set = setOf([gate, dependent], overrides);
    const tester = request({}, 'tester');
    expect(evaluateOfrep(set, findFlag(set, 'gate')!, tester)).toMatchObject({
      value: true,
      reason: 'TARGETING_MATCH',
      variant: 'override',
    });
    expect(evaluateOfrep(set, findFlag(set, 'dependent')!, tester)).toMatchObject({ value: true, reason: 'DEFAULT' });
    expect(evaluateOfrep(set, findFlag(set, 'dependent')!, request({}, 'someone'))).toMatchObject({
      value: false,
      reason: 'DEFAULT',
      variant: 'off',
      metadata: { prerequisite: 'gate' },
    });
  });

  it('serves the values GET /api/v1/flags serves, and PARSE_ERROR where GET /flags leaves a flag out', () => {
    const set = setOf([
      definition('a', { rules: [proOnly, rule('half', { priority: 2, rolloutPercentage: 50 })] }),
      definition('n', { value: '7' }, { valueType: 'integer', defaultValue: '0' }),
      definition('j', { value: '{"k":[1]}' }, { valueType: 'json', defaultValue: '{}' }),
      definition('broken', { value: 'not json' }, { valueType: 'json', defaultValue: '{}' }),
    ]);
    for (const deviceId of ['d-1', 'd-2', 'd-3']) {
      for (const plan of ['pro', 'free']) {
        const ofrep = evaluateOfrepAll(set, request({ plan }, deviceId));
        const values = evaluateFlagSet(set.flags, 'production', request({ plan }, deviceId).context);
        const served = Object.fromEntries(
          ofrep
            .filter((result) => 'value' in result)
            .map((result) => [result.key, (result as { value: unknown }).value]),
        );
        expect(served).toEqual({ ...values });
        expect(ofrep.find((result) => result.key === 'broken')).toMatchObject({ errorCode: 'PARSE_ERROR' });
      }
    }
  });
});
