import { describe, expect, it } from '@jest/globals';
import {
  claimKeyProblem,
  definitionProblems,
  foreignConfigurationProblems,
  normalizeConfiguration,
} from './claim-input.js';
import type { ConditionalRule } from './engine/index.js';

describe('claim input', () => {
  it('accepts keys that start with a letter and hold letters, digits and underscores', () => {
    for (const key of ['plan', 'Plan2', 'a_b_c', 'x'.repeat(64)]) expect(claimKeyProblem(key)).toBeNull();
    for (const key of ['', '2plan', '_plan', 'plan-tier', 'plän', 'x'.repeat(65), 42]) {
      expect(claimKeyProblem(key)).toEqual(expect.any(String));
    }
  });

  it('reserves subscription in any casing and the names the token service sets', () => {
    for (const key of ['subscription', 'SubScription', 'sub', 'EXP', 'org_id', 'risk_score']) {
      expect(claimKeyProblem(key)).toContain('reserved');
    }
    expect(claimKeyProblem('subscription_tier')).toBeNull();
  });

  it('names every non-null configuration field of another type; null counts as absent', () => {
    expect(foreignConfigurationProblems({ staticValue: 'x', dynamicExpression: null }, 'static')).toEqual([]);
    expect(foreignConfigurationProblems({ staticValue: 'x', conditionalRules: [] }, 'dynamic')).toEqual([
      { field: 'staticValue', message: 'is not allowed for a dynamic claim' },
      { field: 'conditionalRules', message: 'is not allowed for a dynamic claim' },
    ]);
  });

  it('requires conditional rule ids to be UUIDs when given', () => {
    const rule = {
      operator: 'AND',
      conditions: [{ field: 'country', operator: 'equals', value: 'DE' }],
      value: 'x',
      priority: 1,
    };
    expect(
      definitionProblems({ claimType: 'conditional', dataType: 'string', conditionalRules: [rule] }, false),
    ).toEqual([]);
    expect(
      definitionProblems(
        { claimType: 'conditional', dataType: 'string', conditionalRules: [{ ...rule, id: 'r1' }] },
        false,
      ),
    ).toEqual([{ field: 'conditionalRules[0].id', message: 'must be a UUID' }]);
  });

  it('stores only documented members and gives rules without one an id', () => {
    const rules = normalizeConfiguration('conditional', [
      {
        operator: 'OR',
        conditions: [{ field: 'country', operator: 'equals', value: 'DE', extra: 1 }],
        value: 'x',
        priority: 1,
        junk: true,
      },
    ]) as ConditionalRule[];
    expect(rules).toEqual([
      {
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        operator: 'OR',
        conditions: [{ field: 'country', operator: 'equals', value: 'DE' }],
        value: 'x',
        priority: 1,
      },
    ]);
    expect(
      normalizeConfiguration('external', {
        endpoint: 'https://example.com',
        method: 'GET',
        responseMapping: { jsonPath: '$.a' },
      }),
    ).toEqual({
      endpoint: 'https://example.com',
      method: 'GET',
      headers: {},
      queryParameters: {},
      bodyTemplate: null,
      responseMapping: { jsonPath: '$.a', defaultValue: null, transformExpression: null },
      cacheSeconds: 0,
      timeoutSeconds: 5,
      retryCount: 0,
      authentication: null,
    });
  });
});
