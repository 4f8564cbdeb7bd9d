import { describe, expect, it } from '@jest/globals';
import { ClaimEvaluationError } from './claim-evaluation-error.js';
import type { ConditionOperator } from '../../common/rules/operators.js';
import type { ConditionField, ConditionalRule, DeviceContext, FieldError } from './claim-types.js';
import { compileConditionalRules, evaluateConditionalRules } from './conditional-rules.js';

const device: DeviceContext = {
  keyId: 'key-1',
  deviceModel: 'iPhone15,2',
  osVersion: '17.4.1',
  appVersion: '2.10.0',
  riskScore: 42,
  attestationCount: 7,
  jailbreakDetected: false,
  country: 'DE',
  deviceIntegrity: 'strong',
  firstSeenDays: 30,
  suspiciousEvents: 0,
};

function matches(
  field: ConditionField,
  operator: ConditionOperator,
  value: string,
  context: DeviceContext = device,
): boolean {
  const rules: ConditionalRule[] = [
    { operator: 'AND', conditions: [{ field, operator, value }], value: 'hit', priority: 0 },
  ];
  return evaluateConditionalRules(rules, context) === 'hit';
}

type Case = [ConditionOperator, string, boolean];

describe('conditions on string fields (case-sensitive)', () => {
  it.each<Case>([
    ['equals', 'iPhone15,2', true],
    ['equals', 'iphone15,2', false],
    ['not_equals', 'iPhone15,2', false],
    ['not_equals', 'iPad13,1', true],
    ['greater_than', 'iPhone14', true],
    ['less_than', 'iPhone16', true],
    ['greater_than_or_equal', 'iPhone15,2', true],
    ['less_than_or_equal', 'iPhone15,1', false],
    ['contains', 'Phone15', true],
    ['contains', 'phone15', false],
    ['not_contains', 'iPad', true],
    ['starts_with', 'iPhone', true],
    ['ends_with', ',2', true],
    ['regex', '^iPhone1[5-9],', true],
    ['regex', '^iPad', false],
  ])('device_model %s %j is %s', (operator, value, expected) => {
    expect(matches('device_model', operator, value)).toBe(expected);
  });

  it.each<Case>([
    ['in_list', 'US, DE ,FR', true],
    ['in_list', 'US,de', false],
    ['not_in_list', 'US,FR', true],
    ['not_in_list', 'DE', false],
  ])('country %s %j is %s', (operator, value, expected) => {
    expect(matches('country', operator, value)).toBe(expected);
  });

  it('reads device_integrity', () => {
    expect(matches('device_integrity', 'equals', 'strong')).toBe(true);
  });
});

describe('conditions on numeric fields', () => {
  it.each<Case>([
    ['equals', '42', true],
    ['equals', '42.0', true],
    ['not_equals', '41', true],
    ['greater_than', '41.5', true],
    ['less_than', '42', false],
    ['greater_than_or_equal', '42', true],
    ['less_than_or_equal', '41', false],
    ['contains', '4', true],
    ['not_contains', '7', true],
    ['starts_with', '4', true],
    ['ends_with', '2', true],
    ['regex', '^\\d{2}$', true],
    ['in_list', '10, 42 ,50', true],
    ['not_in_list', '1,2', true],
    ['in_list', '1,2', false],
  ])('risk_score %s %j is %s', (operator, value, expected) => {
    expect(matches('risk_score', operator, value)).toBe(expected);
  });

  it('compares numerically, not as text', () => {
    expect(matches('attestation_count', 'greater_than', '10')).toBe(false);
    expect(matches('attestation_count', 'less_than', '10')).toBe(true);
    expect(matches('first_seen_days', 'greater_than_or_equal', '30')).toBe(true);
    expect(matches('suspicious_events', 'equals', '0')).toBe(true);
  });
});

describe('conditions on version fields', () => {
  it.each<Case>([
    ['equals', '17.4.1', true],
    ['equals', '17.4.1.0', true],
    ['not_equals', '17.4', true],
    ['greater_than', '17.4', true],
    ['less_than', '17.10', true],
    ['greater_than_or_equal', '17.4.1', true],
    ['less_than_or_equal', '9.9', false],
    ['contains', '.4.', true],
    ['not_contains', '16', true],
    ['starts_with', '17.', true],
    ['ends_with', '.1', true],
    ['regex', '^17\\.', true],
    ['in_list', '16.0, 17.4.1', true],
    ['not_in_list', '17.4.0', true],
  ])('os_version %s %j is %s', (operator, value, expected) => {
    expect(matches('os_version', operator, value)).toBe(expected);
  });

  it('orders app versions by component, so 2.10 is after 2.9', () => {
    expect(matches('app_version', 'greater_than', '2.9.9')).toBe(true);
    expect(matches('app_version', 'less_than', '2.10.0-beta.1')).toBe(false);
  });

  it('does not match ordering conditions when the device reports an unreadable version', () => {
    const odd = { ...device, osVersion: 'beta' };
    expect(matches('os_version', 'greater_than', '1.0', odd)).toBe(false);
    expect(matches('os_version', 'less_than', '1.0', odd)).toBe(false);
    expect(matches('os_version', 'not_equals', '1.0', odd)).toBe(true);
  });
});

describe('conditions on jailbreak_detected', () => {
  it.each<Case>([
    ['equals', 'false', true],
    ['equals', 'TRUE', false],
    ['not_equals', 'true', true],
    ['in_list', 'false', true],
    ['not_in_list', 'true', true],
  ])('%s %j is %s', (operator, value, expected) => {
    expect(matches('jailbreak_detected', operator, value)).toBe(expected);
  });

  it.each<ConditionOperator>([
    'greater_than',
    'less_than',
    'greater_than_or_equal',
    'less_than_or_equal',
    'contains',
    'not_contains',
    'starts_with',
    'ends_with',
    'regex',
  ])('refuses %s', (operator) => {
    expect(() => matches('jailbreak_detected', operator, 'true')).toThrow('does not apply');
  });
});

describe('conditions on a field the device did not report', () => {
  const anonymous: DeviceContext = { keyId: 'k', riskScore: 0, attestationCount: 1, jailbreakDetected: false };

  it.each<Case>([
    ['equals', 'DE', false],
    ['not_equals', 'DE', true],
    ['contains', 'D', false],
    ['not_contains', 'D', true],
    ['in_list', 'DE,US', false],
    ['not_in_list', 'DE,US', true],
    ['greater_than', 'A', false],
    ['regex', '.*', false],
  ])('country %s %j is %s', (operator, value, expected) => {
    expect(matches('country', operator, value, anonymous)).toBe(expected);
  });
});

describe('rules', () => {
  const rule = (
    priority: number,
    value: string,
    operator: 'AND' | 'OR',
    ...conditions: ConditionalRule['conditions']
  ): ConditionalRule => ({
    operator,
    conditions,
    value,
    priority,
  });
  const lowRisk = { field: 'risk_score', operator: 'less_than', value: '50' } as const;
  const german = { field: 'country', operator: 'equals', value: 'DE' } as const;
  const french = { field: 'country', operator: 'equals', value: 'FR' } as const;

  it('needs every condition of an AND rule', () => {
    expect(evaluateConditionalRules([rule(0, 'both', 'AND', lowRisk, german)], device)).toBe('both');
    expect(evaluateConditionalRules([rule(0, 'both', 'AND', lowRisk, french)], device)).toBeNull();
  });

  it('needs one condition of an OR rule', () => {
    expect(evaluateConditionalRules([rule(0, 'either', 'OR', french, lowRisk)], device)).toBe('either');
    expect(evaluateConditionalRules([rule(0, 'either', 'OR', french)], device)).toBeNull();
  });

  it('returns the first matching rule by ascending priority, whatever the array order', () => {
    const rules = [
      rule(5, 'later', 'AND', german),
      rule(1, 'first', 'AND', lowRisk),
      rule(0, 'no match', 'AND', french),
    ];
    expect(evaluateConditionalRules(rules, device)).toBe('first');
  });

  it('keeps the array order between rules of equal priority', () => {
    expect(evaluateConditionalRules([rule(1, 'a', 'AND', german), rule(1, 'b', 'AND', lowRisk)], device)).toBe('a');
  });

  it('reports every problem with its path', () => {
    const problems: FieldError[] = [];
    compileConditionalRules(
      [
        { operator: 'XOR', conditions: [], value: 1, priority: 'high' },
        {
          operator: 'AND',
          value: 'x',
          priority: 0,
          conditions: [
            { field: 'battery', operator: 'equals', value: '1' },
            { field: 'risk_score', operator: 'like', value: '1' },
            { field: 'risk_score', operator: 'greater_than', value: 'high' },
            { field: 'os_version', operator: 'less_than', value: 'latest' },
            { field: 'jailbreak_detected', operator: 'equals', value: 'yes' },
            { field: 'device_model', operator: 'regex', value: '(?=a)' },
            { field: 'country', operator: 'in_list', value: ' , ' },
            'risk_score > 1',
          ],
        },
      ],
      'conditionalRules',
      problems,
    );
    expect(problems.map((p) => p.field)).toEqual([
      'conditionalRules[0].operator',
      'conditionalRules[0].value',
      'conditionalRules[0].priority',
      'conditionalRules[0].conditions',
      'conditionalRules[1].conditions[0].field',
      'conditionalRules[1].conditions[1].operator',
      'conditionalRules[1].conditions[2].value',
      'conditionalRules[1].conditions[3].value',
      'conditionalRules[1].conditions[4].value',
      'conditionalRules[1].conditions[5].value',
      'conditionalRules[1].conditions[6].value',
      'conditionalRules[1].conditions[7]',
    ]);
  });

  it('refuses an empty or missing rule list', () => {
    expect(() => evaluateConditionalRules([], device)).toThrow(ClaimEvaluationError);
    expect(() => evaluateConditionalRules(null, device)).toThrow('conditionalRules');
  });
});
