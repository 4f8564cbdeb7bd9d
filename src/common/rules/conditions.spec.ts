import { describe, expect, it } from '@jest/globals';
import { compileConditionTest, type ConditionTest } from './conditions.js';
import type { ListSyntax } from './list-value.js';
import { CONDITION_OPERATORS, type ConditionOperator } from './operators.js';
import { operandOf, toOperand, type ValueKind } from './typed-comparison.js';

function compiled(kind: ValueKind, operator: string, value: string, lists: ListSyntax = 'escaped'): ConditionTest {
  const result = compileConditionTest({ kind, operator, value }, lists);
  if (!result.ok) throw new Error(result.message);
  return result.test;
}

function passes(kind: ValueKind, actual: string | number | boolean, operator: ConditionOperator, value: string) {
  return compiled(kind, operator, value)(operandOf(actual, kind));
}

type Case = [ConditionOperator, string, boolean];

describe('conditions on text', () => {
  it.each<Case>([
    ['equals', 'iPhone15,2', true],
    ['equals', 'iphone15,2', false],
    ['not_equals', 'iPhone15,2', false],
    ['not_equals', 'iPad13,1', true],
    ['greater_than', 'iPhone14', true],
    ['greater_than', 'iPhone16', false],
    ['less_than', 'iPhone16', true],
    ['less_than', 'iPhone14', false],
    ['greater_than_or_equal', 'iPhone15,2', true],
    ['greater_than_or_equal', 'iPhone15,3', false],
    ['less_than_or_equal', 'iPhone15,2', true],
    ['less_than_or_equal', 'iPhone15,1', false],
    ['contains', 'Phone15', true],
    ['contains', 'phone15', false],
    ['not_contains', 'iPad', true],
    ['not_contains', 'iPhone', false],
    ['starts_with', 'iPhone', true],
    ['starts_with', 'Phone', false],
    ['ends_with', ',2', true],
    ['ends_with', ',3', false],
    ['regex', '^iPhone1[5-9],', true],
    ['regex', '^iPad', false],
    ['in_list', 'iPad13\\,1, iPhone15\\,2', true],
    ['in_list', 'iPhone15,2', false],
    ['not_in_list', 'iPad13\\,1', true],
    ['not_in_list', 'iPhone15\\,2', false],
  ])('iPhone15,2 %s %j is %s', (operator, value, expected) => {
    expect(passes('text', 'iPhone15,2', operator, value)).toBe(expected);
  });

  it('compares digits as text, not as numbers', () => {
    expect(passes('text', '10', 'less_than', '9')).toBe(true);
    expect(passes('text', '10', 'equals', '10.0')).toBe(false);
  });
});

describe('conditions on numbers', () => {
  it.each<Case>([
    ['equals', '42', true],
    ['equals', '42.0', true],
    ['equals', '4', false],
    ['not_equals', '41', true],
    ['not_equals', '42', false],
    ['greater_than', '41.5', true],
    ['greater_than', '42', false],
    // Numeric, not string, ordering: '42' > '100' as strings.
    ['less_than', '100', true],
    ['less_than', '42', false],
    ['greater_than_or_equal', '42', true],
    ['greater_than_or_equal', '43', false],
    ['less_than_or_equal', '42', true],
    ['less_than_or_equal', '41', false],
    ['contains', '4', true],
    ['contains', '7', false],
    ['not_contains', '7', true],
    ['not_contains', '2', false],
    ['starts_with', '4', true],
    ['ends_with', '2', true],
    ['regex', '^\\d{2}$', true],
    ['regex', '^\\d$', false],
    ['in_list', '10, 42.0 ,50', true],
    ['in_list', '1,2', false],
    ['not_in_list', '1,2', true],
    ['not_in_list', '42', false],
  ])('42 %s %j is %s', (operator, value, expected) => {
    expect(passes('number', 42, operator, value)).toBe(expected);
    expect(passes('number', '42', operator, value)).toBe(expected);
  });

  it('never matches equality or order against a value that is not a number', () => {
    for (const operator of ['equals', 'greater_than', 'less_than', 'in_list'] as const) {
      expect(passes('number', 42, operator, 'high')).toBe(false);
    }
    expect(passes('number', 42, 'not_equals', 'high')).toBe(true);
    expect(passes('number', NaN, 'greater_than', '1')).toBe(false);
  });
});

describe('conditions on versions', () => {
  it.each<Case>([
    ['equals', '2.10', true],
    ['equals', '2.1', false],
    ['not_equals', '2.9', true],
    ['not_equals', '2.10.0.0', false],
    // Semantic, not string, ordering: '2.10.0' < '2.9' as strings.
    ['greater_than', '2.9', true],
    ['greater_than', '2.10.0', false],
    ['less_than', '2.10.1', true],
    ['less_than', '2.10.0-beta.1', false],
    ['greater_than_or_equal', '2.10.0', true],
    ['greater_than_or_equal', '3', false],
    ['less_than_or_equal', '2.10', true],
    ['less_than_or_equal', '2.9', false],
    ['contains', '.10', true],
    ['not_contains', 'beta', true],
    ['starts_with', '2.1', true],
    ['ends_with', '.0', true],
    ['regex', '^2\\.\\d+\\.0$', true],
    ['in_list', '2.9, 2.10', true],
    ['in_list', '2.9,3.0', false],
    ['not_in_list', '2.9,3.0', true],
    ['not_in_list', '2.10.0.0', false],
  ])('2.10.0 %s %j is %s', (operator, value, expected) => {
    expect(passes('version', '2.10.0', operator, value)).toBe(expected);
  });

  it('orders nothing that is not a version, but compares equality as text', () => {
    expect(passes('version', 'nightly', 'greater_than', '1.0')).toBe(false);
    expect(passes('version', 'nightly', 'less_than', '1.0')).toBe(false);
    expect(passes('version', 'nightly', 'equals', 'nightly')).toBe(true);
    expect(passes('version', 'nightly', 'not_equals', '1.0')).toBe(true);
    expect(passes('version', '2.10.0', 'greater_than', 'latest')).toBe(false);
  });
});

describe('conditions on booleans', () => {
  it.each<Case>([
    ['equals', 'false', true],
    ['equals', 'FALSE', true],
    ['equals', 'true', false],
    ['not_equals', 'true', true],
    ['in_list', 'true, False', true],
    ['in_list', 'true', false],
    ['not_in_list', 'true', true],
    ['greater_than', 'false', false],
    ['less_than_or_equal', 'false', false],
  ])('false %s %j is %s', (operator, value, expected) => {
    expect(passes('boolean', false, operator, value)).toBe(expected);
  });
});

describe('conditions on auto values (numbers when both sides are, else text)', () => {
  it('compares numerically when both sides are numbers', () => {
    expect(passes('auto', '10', 'greater_than', '9')).toBe(true);
    expect(passes('auto', '10', 'equals', '10.0')).toBe(true);
    expect(passes('auto', '10', 'in_list', '1e1')).toBe(true);
  });

  it('falls back to text otherwise', () => {
    expect(passes('auto', 'b', 'greater_than', 'a')).toBe(true);
    expect(passes('auto', '10', 'less_than', 'x')).toBe(true);
    expect(passes('auto', '10', 'equals', '0xa')).toBe(false);
  });
});

describe('list syntax', () => {
  it('reads escaped commas in the escaped syntax and splits on every comma in the plain one', () => {
    const model = toOperand('iPhone14,2', 'text');
    expect(compiled('text', 'in_list', 'iPhone14\\,2', 'escaped')(model)).toBe(true);
    expect(compiled('text', 'in_list', 'iPhone14\\,2', 'plain')(model)).toBe(false);
    expect(compiled('text', 'in_list', 'DE,FR,IT', 'plain')(toOperand('FR', 'text'))).toBe(true);
  });
});

describe('bad input', () => {
  it('answers an unknown operator with an error, not an exception', () => {
    for (const operator of ['like', '', 'constructor', '__proto__']) {
      expect(compileConditionTest({ kind: 'text', operator, value: 'x' }, 'escaped')).toEqual({
        ok: false,
        field: 'operator',
        message: `must be one of ${CONDITION_OPERATORS.join(', ')}`,
      });
    }
  });

  it('answers a pattern RE2 cannot run, or an empty or overlong one, with an error on the value', () => {
    for (const value of ['(a)\\1', '(?=a)', '[a-', '', 'a'.repeat(257)]) {
      const result = compileConditionTest({ kind: 'text', operator: 'regex', value }, 'escaped');
      expect(result).toEqual({ ok: false, field: 'value', message: expect.stringMatching(/^must /) });
    }
  });

  it('compiles every operator on every kind whatever the value, answering false where nothing compares', () => {
    const kinds: ValueKind[] = ['text', 'number', 'version', 'boolean', 'auto'];
    for (const kind of kinds) {
      for (const operator of CONDITION_OPERATORS) {
        for (const value of ['', ' , ', 'not a number', '1e999', '\\', '0x1f']) {
          const result = compileConditionTest({ kind, operator, value }, 'escaped');
          if (operator === 'regex' && !result.ok) continue;
          expect(result.ok).toBe(true);
          if (result.ok) expect(typeof result.test(toOperand('', kind))).toBe('boolean');
        }
      }
    }
  });

  it('treats an empty list as matching nothing', () => {
    expect(compiled('text', 'in_list', ' , ')(toOperand('x', 'text'))).toBe(false);
    expect(compiled('text', 'not_in_list', ' , ')(toOperand('x', 'text'))).toBe(true);
  });
});

describe('regex conditions run in linear time', () => {
  it('answer patterns that backtrack catastrophically elsewhere, on long adversarial input', () => {
    const attack = toOperand(`${'a'.repeat(50_000)}!`, 'text');
    const started = performance.now();
    for (const pattern of ['^(a+)+$', '^(a|a)*$', '^(a*)*b$', '^(.*a){20}$']) {
      expect([pattern, compiled('text', 'regex', pattern)(attack)]).toEqual([pattern, false]);
    }
    expect(compiled('text', 'regex', '^(a|a)*!$')(attack)).toBe(true);
    // A backtracking engine needs 2^n steps here; a linear one answers well within the bound.
    expect(performance.now() - started).toBeLessThan(10_000);
  });
});
