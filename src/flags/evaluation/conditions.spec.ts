import { describe, expect, it } from '@jest/globals';
import { CONDITION_OPERATORS, type ConditionOperator } from '../../common/rules/operators.js';
import { compileCondition, conditionPasses, PreparedContext, validateCondition } from './conditions.js';
import type { EvaluationContext } from './flag-types.js';

function passes(attribute: string, operator: ConditionOperator, value: string, context: EvaluationContext): boolean {
  return conditionPasses(compileCondition({ attribute, operator, value }), new PreparedContext(context));
}

type Case = [ConditionOperator, string, boolean];

describe('string attributes', () => {
  const context: EvaluationContext = { country: 'US', deviceModel: 'iPhone14,2', locale: 'en-US' };
  it.each<Case>([
    ['equals', 'US', true],
    ['equals', 'us', false],
    ['not_equals', 'CA', true],
    ['not_equals', 'US', false],
    ['greater_than', 'CA', true],
    ['greater_than', 'ZA', false],
    ['less_than', 'ZA', true],
    ['less_than', 'CA', false],
    ['greater_than_or_equal', 'US', true],
    ['greater_than_or_equal', 'UZ', false],
    ['less_than_or_equal', 'US', true],
    ['less_than_or_equal', 'UA', false],
    ['contains', 'S', true],
    ['contains', 'X', false],
    ['not_contains', 'X', true],
    ['not_contains', 'U', false],
    ['starts_with', 'U', true],
    ['starts_with', 'S', false],
    ['ends_with', 'S', true],
    ['ends_with', 'U', false],
    ['regex', '^[A-Z]{2}$', true],
    ['regex', '^[a-z]{2}$', false],
    ['in_list', 'CA, US ,GB', true],
    ['in_list', 'CA,GB', false],
    ['not_in_list', 'CA,GB', true],
    ['not_in_list', 'GB,US', false],
  ])('country US %s %s is %s', (operator, value, expected) => {
    expect(passes('country', operator, value, context)).toBe(expected);
  });

  it('matches model identifiers containing commas through escaped list items', () => {
    expect(passes('device_model', 'in_list', 'iPhone15\\,3, iPhone14\\,2', context)).toBe(true);
    expect(passes('device_model', 'in_list', 'iPhone14,2', context)).toBe(false);
    expect(passes('device_model', 'equals', 'iPhone14,2', context)).toBe(true);
  });

  it('compares strings case-sensitively', () => {
    expect(passes('locale', 'equals', 'en-us', context)).toBe(false);
    expect(passes('locale', 'starts_with', 'en', context)).toBe(true);
  });
});

describe('numeric attributes', () => {
  const context: EvaluationContext = { riskScore: 75 };
  it.each<Case>([
    ['equals', '75', true],
    ['equals', '75.0', true],
    ['equals', '7', false],
    ['not_equals', '74', true],
    ['not_equals', '75', false],
    ['greater_than', '50', true],
    ['greater_than', '75', false],
    // Numeric, not string, ordering: '75' > '100' as strings.
    ['less_than', '100', true],
    ['less_than', '75', false],
    ['greater_than_or_equal', '75', true],
    ['greater_than_or_equal', '76', false],
    ['less_than_or_equal', '75', true],
    ['less_than_or_equal', '74.5', false],
    ['contains', '5', true],
    ['contains', '6', false],
    ['not_contains', '6', true],
    ['not_contains', '7', false],
    ['starts_with', '7', true],
    ['starts_with', '5', false],
    ['ends_with', '5', true],
    ['ends_with', '7', false],
    ['regex', '^\\d{2}$', true],
    ['regex', '^\\d$', false],
    ['in_list', '10, 75.0', true],
    ['in_list', '10,20', false],
    ['not_in_list', '10,20', true],
    ['not_in_list', '75', false],
  ])('risk_score 75 %s %s is %s', (operator, value, expected) => {
    expect(passes('risk_score', operator, value, context)).toBe(expected);
  });

  it('never orders a risk score against a non-number', () => {
    for (const operator of ['equals', 'greater_than', 'less_than'] as const) {
      expect(passes('risk_score', operator, 'high', context)).toBe(false);
    }
  });

  it('compares other attributes numerically when both sides are numbers, else as strings', () => {
    const custom: EvaluationContext = { custom: { level: '10', tier: 'b' } };
    expect(passes('custom.level', 'greater_than', '9', custom)).toBe(true);
    expect(passes('custom.level', 'equals', '10.0', custom)).toBe(true);
    expect(passes('custom.level', 'in_list', '1e1', custom)).toBe(true);
    expect(passes('custom.tier', 'greater_than', 'a', custom)).toBe(true);
    // '10' against 'x' falls back to string order, where '1' < 'x'.
    expect(passes('custom.level', 'less_than', 'x', custom)).toBe(true);
    // Hex and blank strings are not numbers, so they compare as text.
    expect(passes('custom.level', 'equals', '0xa', custom)).toBe(false);
  });
});

describe('version attributes', () => {
  const context: EvaluationContext = { appVersion: '2.10.0', osVersion: '17.4-beta.2' };
  it.each<Case>([
    ['equals', '2.10', true],
    ['equals', '2.1', false],
    ['not_equals', '2.9', true],
    ['not_equals', '2.10.0', false],
    // Semantic, not string, ordering: '2.10.0' < '2.9' as strings.
    ['greater_than', '2.9', true],
    ['greater_than', '2.10.0', false],
    ['less_than', '2.10.1', true],
    ['less_than', '2.9.9', false],
    ['greater_than_or_equal', '2.10.0', true],
    ['greater_than_or_equal', '3', false],
    ['less_than_or_equal', '2.10', true],
    ['less_than_or_equal', '2.9', false],
    ['contains', '.10', true],
    ['contains', 'beta', false],
    ['not_contains', 'beta', true],
    ['not_contains', '2.', false],
    ['starts_with', '2.1', true],
    ['starts_with', '3', false],
    ['ends_with', '.0', true],
    ['ends_with', '.1', false],
    ['regex', '^2\\.\\d+\\.0$', true],
    ['regex', '^3\\.', false],
    ['in_list', '2.9, 2.10', true],
    ['in_list', '2.9,3.0', false],
    ['not_in_list', '2.9,3.0', true],
    ['not_in_list', '2.10.0.0', false],
  ])('app_version 2.10.0 %s %s is %s', (operator, value, expected) => {
    expect(passes('app_version', operator, value, context)).toBe(expected);
  });

  it('orders a pre-release below its release', () => {
    expect(passes('os_version', 'less_than', '17.4', context)).toBe(true);
    expect(passes('os_version', 'greater_than', '17.4-beta.1', context)).toBe(true);
    expect(passes('os_version', 'greater_than_or_equal', '17.4', context)).toBe(false);
  });

  it('fails ordering when either side is not a version but still compares equality as text', () => {
    const odd: EvaluationContext = { appVersion: 'nightly' };
    expect(passes('app_version', 'greater_than', '1.0', odd)).toBe(false);
    expect(passes('app_version', 'less_than', '1.0', odd)).toBe(false);
    expect(passes('app_version', 'equals', 'nightly', odd)).toBe(true);
    expect(passes('app_version', 'greater_than', 'latest', context)).toBe(false);
  });
});

describe('custom attributes', () => {
  const context: EvaluationContext = { custom: { plan: 'gold', cohort: 'beta-2' } };

  it.each<Case>([
    ['equals', 'gold', true],
    ['not_equals', 'gold', false],
    ['starts_with', 'go', true],
    ['ends_with', 'ld', true],
    ['contains', 'ol', true],
    ['not_contains', 'x', true],
    ['regex', '^g', true],
    ['in_list', 'silver,gold', true],
    ['not_in_list', 'silver', true],
    ['greater_than', 'bronze', true],
    ['less_than', 'silver', true],
    ['greater_than_or_equal', 'gold', true],
    ['less_than_or_equal', 'gold', true],
  ])('custom.plan gold %s %s is %s', (operator, value, expected) => {
    expect(passes('custom.plan', operator, value, context)).toBe(expected);
  });

  it('reads only keys the device sent, never inherited properties', () => {
    expect(passes('custom.constructor', 'contains', 'Object', context)).toBe(false);
    expect(passes('custom.toString', 'not_equals', 'x', context)).toBe(false);
    expect(new PreparedContext(context).operand('custom.__proto__')).toBeNull();
  });
});

describe('missing attributes', () => {
  it.each(CONDITION_OPERATORS.map((operator) => [operator]))('fail %s, negated operators included', (operator) => {
    expect(passes('country', operator, 'US', {})).toBe(false);
    expect(passes('custom.plan', operator, 'gold', { custom: {} })).toBe(false);
    expect(passes('app_version', operator, '1.0', {})).toBe(false);
    expect(passes('risk_score', operator, '10', {})).toBe(false);
  });

  it('treat an empty string as missing', () => {
    const context = new PreparedContext({ country: '', custom: { plan: '' } });
    expect(context.operand('country')).toBeNull();
    expect(context.operand('custom.plan')).toBeNull();
  });

  it('never match an attribute the service does not know', () => {
    expect(passes('favourite_colour', 'not_equals', 'red', { custom: { favourite_colour: 'blue' } })).toBe(false);
  });

  it('give every context field its attribute', () => {
    const context = new PreparedContext({
      deviceModel: 'iPad13,1',
      osVersion: '17.4',
      appVersion: '2.1',
      deviceId: 'dev-1',
      riskScore: 12,
      locale: 'fr-FR',
      country: 'FR',
      userId: 'u-9',
      attestationStatus: 'verified',
    });
    const actual = (attribute: string) => context.operand(attribute)?.text;
    expect(
      [
        'device_model',
        'os_version',
        'app_version',
        'device_id',
        'risk_score',
        'locale',
        'country',
        'user_id',
        'attestation_status',
      ].map(actual),
    ).toEqual(['iPad13,1', '17.4', '2.1', 'dev-1', '12', 'fr-FR', 'FR', 'u-9', 'verified']);
  });
});

describe('regex conditions run on a linear-time engine (RE2)', () => {
  it('answer patterns that backtrack catastrophically elsewhere, without running them exponentially', () => {
    const context: EvaluationContext = { userId: 'a'.repeat(40) + '!' };
    expect(passes('user_id', 'regex', '^(a+)+$', context)).toBe(false);
    expect(passes('user_id', 'regex', '^(a|a)*!$', context)).toBe(true);
  });

  it('fail when the pattern is invalid or too long', () => {
    expect(passes('user_id', 'regex', '([a-z]', { userId: 'abc' })).toBe(false);
    expect(passes('user_id', 'regex', '(a)\\1', { userId: 'aa' })).toBe(false);
    expect(passes('user_id', 'regex', 'a'.repeat(257), { userId: 'a'.repeat(257) })).toBe(false);
    expect(passes('user_id', 'regex', 'a'.repeat(256), { userId: 'a'.repeat(256) })).toBe(true);
  });
});

describe('validateCondition', () => {
  it('accepts valid conditions', () => {
    expect(validateCondition({ attribute: 'app_version', operator: 'greater_than_or_equal', value: '2.1.0' })).toEqual(
      [],
    );
    expect(validateCondition({ attribute: 'custom.plan', operator: 'in_list', value: 'gold,silver' })).toEqual([]);
    expect(validateCondition({ attribute: 'risk_score', operator: 'less_than', value: '40' })).toEqual([]);
    expect(validateCondition({ attribute: 'app_version', operator: 'contains', value: 'beta' })).toEqual([]);
  });

  it('names an unknown attribute and an unknown operator', () => {
    expect(validateCondition({ attribute: 'colour', operator: 'like', value: 'x' }, 'conditions[1].')).toEqual([
      {
        field: 'conditions[1].attribute',
        message:
          'must be one of device_model, os_version, app_version, device_id, risk_score, locale, country, user_id, attestation_status or custom.<key>',
      },
      { field: 'conditions[1].operator', message: expect.stringContaining('must be one of equals, not_equals') },
    ]);
    expect(validateCondition({ attribute: 'custom.', operator: 'equals', value: 'x' })[0].field).toBe('attribute');
  });

  it.each([
    [
      'user_id',
      'regex',
      '(a)\\1',
      `must be a regular expression RE2 accepts (no backreferences or lookaround): invalid escape sequence: \`\\1\``,
    ],
    [
      'user_id',
      'regex',
      '[a-',
      `must be a regular expression RE2 accepts (no backreferences or lookaround): missing closing ]: \`[a-\``,
    ],
    ['user_id', 'regex', 'x'.repeat(257), 'must be a pattern of at most 256 characters'],
    ['country', 'in_list', ' , ', 'must list at least one comma-separated value'],
    ['risk_score', 'in_list', '10,high', 'must list numbers only'],
    ['risk_score', 'greater_than', 'high', 'must be a number'],
    ['risk_score', 'equals', '', 'must not be empty'],
    ['os_version', 'less_than', 'latest', 'must be a version number such as 2.1.0'],
  ])('rejects %s %s %j', (attribute, operator, value, message) => {
    expect(validateCondition({ attribute, operator, value })).toEqual([{ field: 'value', message }]);
  });
});
