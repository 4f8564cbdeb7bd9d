import { describe, expect, it } from '@jest/globals';
import type { ClaimDataType, ClaimValue, DeviceContext, FieldError, ValidationRules } from './claim-types.js';
import { applyValidationRules, checkValidationRules } from './validation-rules.js';

const context: DeviceContext = {
  keyId: 'k',
  riskScore: 10,
  attestationCount: 1,
  jailbreakDetected: false,
  country: 'DE',
};
const scope = { context, now: 0 };

function errorsFor(rules: ValidationRules, value: ClaimValue, dataType: ClaimDataType = 'string'): string[] {
  return applyValidationRules(rules, value, dataType, scope);
}

describe('validation rules on evaluated values', () => {
  it('checks string length', () => {
    expect(errorsFor({ minLength: 2, maxLength: 4 }, 'abc')).toEqual([]);
    expect(errorsFor({ minLength: 4 }, 'abc')).toEqual(['length is less than minLength 4']);
    expect(errorsFor({ maxLength: 2 }, 'abc')).toEqual(['length is greater than maxLength 2']);
  });

  it('counts array items, not characters', () => {
    expect(errorsFor({ maxLength: 2 }, ['a', 'b', 'c'], 'array')).toEqual(['length is greater than maxLength 2']);
    expect(errorsFor({ minLength: 3 }, ['long string'], 'array')).toEqual(['length is less than minLength 3']);
  });

  it('matches the pattern against the string form, on the linear-time engine', () => {
    expect(errorsFor({ pattern: '^[A-Z]{2}$' }, 'DE')).toEqual([]);
    expect(errorsFor({ pattern: '^[A-Z]{2}$' }, 'DEU')).toEqual(['value does not match pattern ^[A-Z]{2}$']);
    expect(errorsFor({ pattern: '^\\d+$' }, 42, 'number')).toEqual([]);
    expect(errorsFor({ pattern: '^(a+)+$' }, `${'a'.repeat(40)}!`)).toEqual(['value does not match pattern ^(a+)+$']);
    expect(() => errorsFor({ pattern: '(a)\\1' }, 'aa')).toThrow('RE2 accepts');
  });

  it('checks numeric bounds', () => {
    expect(errorsFor({ minValue: 0, maxValue: 100 }, 50, 'number')).toEqual([]);
    expect(errorsFor({ minValue: 0 }, -1, 'number')).toEqual(['value is less than minValue 0']);
    expect(errorsFor({ maxValue: 100 }, 101, 'number')).toEqual(['value is greater than maxValue 100']);
    expect(errorsFor({ maxValue: 10 }, '7')).toEqual([]);
    expect(errorsFor({ maxValue: 10 }, 'seven')).toEqual(['minValue and maxValue need a numeric value']);
  });

  it('compares allowed values after typing them like the claim', () => {
    expect(errorsFor({ allowedValues: ['gold', 'silver'] }, 'gold')).toEqual([]);
    expect(errorsFor({ allowedValues: ['gold', 'silver'] }, 'Gold')).toEqual(['value is not one of allowedValues']);
    expect(errorsFor({ allowedValues: ['1.0', 2] }, 1, 'number')).toEqual([]);
    expect(errorsFor({ allowedValues: [true] }, true, 'boolean')).toEqual([]);
    expect(errorsFor({ allowedValues: ['2024-01-01'] }, '2024-01-01T00:00:00.000Z', 'date')).toEqual([]);
    expect(errorsFor({ allowedValues: [[1, 2]] }, [1, 2], 'array')).toEqual([]);
  });

  it('runs customValidation with the typed value bound', () => {
    expect(errorsFor({ customValidation: 'value % 2 == 0' }, 4, 'number')).toEqual([]);
    expect(errorsFor({ customValidation: 'value % 2 == 0' }, 3, 'number')).toEqual(['value failed customValidation']);
    expect(errorsFor({ customValidation: 'startsWith(value, device.country)' }, 'DE-1')).toEqual([]);
    expect(errorsFor({ customValidation: 'len(value)' }, 'abc')).toEqual(['value failed customValidation']);
    expect(errorsFor({ customValidation: 'toNumber(value) > 1' }, 'abc')[0]).toMatch(
      /^customValidation: cannot convert/,
    );
  });

  it('reports every broken rule', () => {
    expect(errorsFor({ minLength: 5, pattern: '^\\d+$', allowedValues: ['x'] }, 'abc')).toHaveLength(3);
  });
});

describe('checking validationRules in a definition', () => {
  function problemsFor(input: unknown, dataType: ClaimDataType | null = 'number'): FieldError[] {
    const problems: FieldError[] = [];
    checkValidationRules(input, dataType, 'validationRules', problems);
    return problems;
  }

  it('accepts absent, null and well-formed rules', () => {
    expect(problemsFor(undefined)).toEqual([]);
    expect(problemsFor(null)).toEqual([]);
    expect(
      problemsFor({
        required: true,
        minLength: null,
        maxLength: 5,
        pattern: '^\\d+$',
        minValue: 0,
        maxValue: 9,
        allowedValues: ['1', 2],
        customValidation: 'value > 0',
      }),
    ).toEqual([]);
  });

  it('names each faulty field', () => {
    const problems = problemsFor({
      required: 'yes',
      minLength: -1,
      maxLength: 1.5,
      pattern: '(a)\\1',
      minValue: 10,
      maxValue: 'big',
      allowedValues: ['one', 2],
      customValidation: 'value +',
    });
    expect(problems.map((p) => p.field)).toEqual([
      'validationRules.required',
      'validationRules.minLength',
      'validationRules.maxLength',
      'validationRules.maxValue',
      'validationRules.pattern',
      'validationRules.allowedValues[0]',
      'validationRules.customValidation',
    ]);
  });

  it('refuses inverted bounds and a non-object', () => {
    expect(problemsFor({ minLength: 5, maxLength: 2, minValue: 3, maxValue: 1 }).map((p) => p.field)).toEqual([
      'validationRules.maxLength',
      'validationRules.maxValue',
    ]);
    expect(problemsFor('strict')).toEqual([{ field: 'validationRules', message: 'must be an object' }]);
  });
});
