import { describe, expect, it } from '@jest/globals';
import { validateEnvironmentConfig, validateRule } from './validate-rule.js';
import type { FlagRuleInput } from './validate-rule.js';

const valid: FlagRuleInput = {
  name: 'Beta testers',
  priority: 10,
  conditions: [
    { attribute: 'app_version', operator: 'greater_than_or_equal', value: '2.1.0' },
    { attribute: 'custom.cohort', operator: 'regex', value: '^beta-\\d+$' },
  ],
  rolloutPercentage: 12.5,
  value: 'true',
};

describe('validateRule', () => {
  it('accepts a valid rule', () => {
    expect(validateRule(valid, 'boolean')).toEqual([]);
    expect(validateRule({ ...valid, rolloutPercentage: null }, 'boolean')).toEqual([]);
    expect(validateRule({ ...valid, rolloutPercentage: 0 }, 'boolean')).toEqual([]);
    expect(validateRule({ ...valid, rolloutPercentage: 100 }, 'boolean')).toEqual([]);
  });

  it('names every problem by field', () => {
    const rule: FlagRuleInput = {
      name: ' ',
      priority: 1.5,
      rolloutPercentage: 100.5,
      value: 'yes',
      conditions: [
        { attribute: 'app_version', operator: 'greater_than', value: '2.0' },
        { attribute: 'shoe_size', operator: 'bigger', value: '9' },
        { attribute: 'user_id', operator: 'regex', value: '(a)\\1$' },
      ],
    };
    expect(validateRule(rule, 'boolean')).toEqual([
      { field: 'name', message: 'must not be empty' },
      { field: 'priority', message: 'must be an integer' },
      { field: 'rolloutPercentage', message: 'must be between 0 and 100, or null' },
      { field: 'value', message: "must be true or false (the flag's type is boolean)" },
      { field: 'conditions[1].attribute', message: expect.stringContaining('must be one of device_model') },
      { field: 'conditions[1].operator', message: expect.stringContaining('must be one of equals') },
      {
        field: 'conditions[2].value',
        message: expect.stringContaining('RE2 accepts'),
      },
    ]);
  });

  it.each([-0.001, -5, Number.NaN, Number.POSITIVE_INFINITY])('rejects rollout %d', (rolloutPercentage) => {
    expect(validateRule({ ...valid, rolloutPercentage }, 'boolean')).toEqual([
      { field: 'rolloutPercentage', message: 'must be between 0 and 100, or null' },
    ]);
  });

  it("checks the value against the flag's type", () => {
    expect(validateRule({ ...valid, value: '3' }, 'integer')).toEqual([]);
    expect(validateRule({ ...valid, value: '3.5' }, 'integer')).toEqual([
      { field: 'value', message: "must be a whole number between -(2^53-1) and 2^53-1 (the flag's type is integer)" },
    ]);
    expect(validateRule({ ...valid, value: '{"a":' }, 'json')[0]).toEqual({
      field: 'value',
      message: "must be valid JSON (the flag's type is json)",
    });
  });
});

describe('validateEnvironmentConfig', () => {
  it('places rule problems under rules[index]', () => {
    expect(
      validateEnvironmentConfig(
        {
          value: 'maybe',
          rules: [valid, { ...valid, conditions: [{ attribute: 'risk_score', operator: 'less_than', value: 'low' }] }],
        },
        'boolean',
      ),
    ).toEqual([
      { field: 'value', message: "must be true or false (the flag's type is boolean)" },
      { field: 'rules[1].conditions[0].value', message: 'must be a number' },
    ]);
  });
});
