import { describe, expect, it } from '@jest/globals';
import { compileFlagSet } from '../flags/evaluation/compile-flag.js';
import { evaluateFlagSet } from '../flags/evaluation/evaluate-flag.js';
import type { FlagDefinition, FlagEnvironmentConfig, FlagRule } from '../flags/evaluation/flag-types.js';
import { indexFlagSet } from '../flags/evaluation/flag-set-index.js';
import { planFlagSet } from '../flags/evaluation/flag-set-plan.js';
import { rolloutBucket } from '../flags/evaluation/rollout.js';
import { overridesOf, type AppFlagSet } from '../flags/index.js';
import { parseOfrepRequest, type OfrepEvaluationRequest } from './ofrep-context.js';
import { evaluateOfrep, evaluateOfrepAll, findFlag } from './ofrep-evaluation.js';

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
  return { flags, plan: planFlagSet(flags), index: indexFlagSet(flags), version: 'v1', overridesByDevice: overrides };
}

function request(context: Record<string, unknown>, deviceId = 'device-1'): OfrepEvaluationRequest {
  return parseOfrepRequest({ context }, { kind: 'device', deviceId, riskScore: null }) as OfrepEvaluationRequest;
}

/** The same device asked about by a server with a `flags:read` key. */
function serverRequest(context: Record<string, unknown>, deviceId = 'device-1'): OfrepEvaluationRequest {
  return parseOfrepRequest(
    { context: { ...context, targetingKey: deviceId } },
    { kind: 'server' },
  ) as OfrepEvaluationRequest;
}

const int: Partial<FlagDefinition> = { valueType: 'integer', defaultValue: '0' };

const proOnly = rule('pro plan', { conditions: [{ attribute: 'custom.plan', operator: 'equals', value: 'pro' }] });

describe('evaluateOfrep', () => {
  it('maps each outcome of the kernel to a reason and a variant', () => {
    const set = setOf([
      definition('static', { value: 'true' }),
      definition('targeted', { rules: [proOnly] }),
      definition('disabled', { enabled: false }, { defaultValue: 'true' }),
    ]);
    const of = (key: string, context: Record<string, unknown> = {}) =>
      evaluateOfrep(set, findFlag(set, key)!, serverRequest(context));
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
    // A device is told a rule served it, not which one (GET /flags shows it no rule either).
    expect(evaluateOfrep(set, findFlag(set, 'targeted')!, request({ plan: 'pro' }))).toEqual({
      key: 'targeted',
      value: true,
      reason: 'TARGETING_MATCH',
      variant: 'rule',
      metadata: { environment: 'production', valueType: 'boolean' },
    });
    expect(of('targeted', { plan: 'free' })).toMatchObject({ value: false, reason: 'DEFAULT', variant: 'value' });
    expect(of('disabled')).toMatchObject({ value: true, reason: 'DISABLED', variant: 'off' });
  });

  it('says SPLIT for a partial rollout that takes the device in, by the kernel bucket', () => {
    const set = setOf([definition('beta', { rules: [rule('half', { rolloutPercentage: 50 })] })]);
    for (const deviceId of ['d-1', 'd-2', 'd-3', 'd-4', 'd-5', 'd-6']) {
      const inside = rolloutBucket('beta', deviceId) < 50;
      expect(evaluateOfrep(set, set.flags[0], serverRequest({}, deviceId))).toMatchObject(
        inside
          ? { value: true, reason: 'SPLIT', variant: 'half', metadata: { rolloutPercentage: 50 } }
          : { value: false, reason: 'DEFAULT' },
      );
      // The device itself learns it is in a split, not the percentage.
      const own = evaluateOfrep(set, set.flags[0], request({}, deviceId));
      expect(own).toMatchObject(inside ? { value: true, reason: 'SPLIT', variant: 'rule' } : { value: false });
      expect(own).not.toHaveProperty('metadata.rolloutPercentage');
      expect(own).not.toHaveProperty('metadata.ruleId');
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

  it('evaluates the set in one pass as GET /flags does: prerequisites, their overrides and stored cycles', () => {
    const gate = definition('gate', { rules: [proOnly] });
    const overrides: AppFlagSet['overridesByDevice'] = new Map([
      ['tester', new Map([['id-gate', [{ deviceKeyId: 'tester', forcedValue: 'true', expiresAt: null }]]])],
    ]);
    const set = setOf(
      [
        definition('z-leaf', { value: 'true', prerequisites: [{ flagKey: 'mid', value: '2' }] }),
        definition('mid', { value: '2', prerequisites: [{ flagKey: 'gate', value: 'true' }] }, int),
        gate,
        definition('x', { value: 'true', prerequisites: [{ flagKey: 'y', value: 'true' }] }),
        definition('y', { value: 'true', prerequisites: [{ flagKey: 'x', value: 'true' }] }),
        definition('own', { value: 'true', prerequisites: [{ flagKey: 'own', value: 'true' }] }),
      ],
      overrides,
    );
    for (const deviceId of ['tester', 'someone']) {
      for (const plan of ['pro', 'free']) {
        const asked = serverRequest({ plan }, deviceId);
        const bulk = evaluateOfrepAll(set, asked);
        // The single-flag route (the prerequisite chain only) answers each flag as the bulk pass does.
        expect(bulk).toEqual(set.flags.map((flag) => evaluateOfrep(set, flag, asked)));
        const values = evaluateFlagSet(set.flags, 'production', asked.context, overridesOf(set, deviceId));
        expect(Object.fromEntries(bulk.map((result) => [result.key, 'value' in result && result.value]))).toEqual({
          ...values,
        });
      }
    }
    const tester = evaluateOfrepAll(set, serverRequest({ plan: 'free' }, 'tester'));
    expect(tester.map((result) => [result.key, 'value' in result && result.value])).toEqual([
      ['gate', true],
      ['mid', 2],
      ['own', false],
      ['z-leaf', true],
      // The cycle comes last; each waits for the other, so both fail.
      ['x', false],
      ['y', false],
    ]);
    expect(tester.find((result) => result.key === 'x')).toMatchObject({ reason: 'DEFAULT', variant: 'off' });
  });
});

/**
 * Counts how often each flag's configuration is read: every evaluation of a flag reads it, so the
 * count bounds the evaluations (a pass that re-evaluated earlier flags for each flag's
 * prerequisites read the first flags about once per flag of the set).
 */
function counted(set: AppFlagSet): { set: AppFlagSet; reads: Map<string, number> } {
  const reads = new Map<string, number>();
  const flags = set.flags.map(
    (flag) =>
      new Proxy(flag, {
        get(target, property, receiver) {
          if (property === 'environments') reads.set(target.key, (reads.get(target.key) ?? 0) + 1);
          return Reflect.get(target, property, receiver) as unknown;
        },
      }),
  );
  const counting = { ...set, flags, index: indexFlagSet(flags) };
  reads.clear();
  return { set: counting, reads };
}

describe('the cost of an OFREP evaluation', () => {
  const FLAGS = 1000;
  /** 1,000 flags each with one prerequisite (the base flag) and five rules. */
  const definitions = [
    definition('aaa-base', { value: 'true' }),
    ...Array.from({ length: FLAGS }, (_, i) =>
      definition(`flag-${String(i).padStart(4, '0')}`, {
        value: 'false',
        prerequisites: [{ flagKey: 'aaa-base', value: 'true' }],
        rules: Array.from({ length: 5 }, (_, r) =>
          rule(`rule ${r}`, {
            priority: r,
            conditions: [{ attribute: 'custom.plan', operator: 'equals', value: `plan-${r}` }],
          }),
        ),
      }),
    ),
  ];

  it('evaluates every flag a bounded number of times in a bulk evaluation: linear in the flags', () => {
    const { set, reads } = counted(setOf(definitions));
    const results = evaluateOfrepAll(set, serverRequest({ plan: 'plan-3' }));
    expect(results).toHaveLength(FLAGS + 1);
    expect(results.filter((result) => 'value' in result && result.value === true)).toHaveLength(FLAGS + 1);
    expect(reads.size).toBe(FLAGS + 1);
    // The base flag is every flag's prerequisite, and still evaluated once.
    expect(Math.max(...reads.values())).toBeLessThanOrEqual(3);
    expect([...reads.values()].reduce((sum, count) => sum + count, 0)).toBeLessThanOrEqual(3 * (FLAGS + 1));
  });

  it("evaluates one flag with its prerequisite chain only, not the set's other flags", () => {
    const { set, reads } = counted(setOf(definitions));
    const last = findFlag(set, 'flag-0999')!;
    expect(evaluateOfrep(set, last, serverRequest({ plan: 'plan-0' }))).toMatchObject({
      value: true,
      variant: 'rule 0',
    });
    expect([...reads.keys()].sort()).toEqual(['aaa-base', 'flag-0999']);
  });
});
