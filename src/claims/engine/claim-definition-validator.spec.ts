import { describe, expect, it } from '@jest/globals';
import { validateClaimDefinition } from './claim-definition-validator.js';

const rule = {
  operator: 'AND',
  priority: 0,
  value: '1',
  conditions: [{ field: 'risk_score', operator: 'less_than', value: '30' }],
};
const externalConfig = {
  endpoint: 'https://partner.example.com/x',
  method: 'GET',
  responseMapping: { jsonPath: '$.v' },
};

function fieldsOf(input: unknown, options = {}): string[] {
  return validateClaimDefinition(input, options).map((problem) => problem.field);
}

describe('validateClaimDefinition', () => {
  it('accepts a valid definition of each type', () => {
    expect(validateClaimDefinition({ claimType: 'static', dataType: 'number', staticValue: '5' })).toEqual([]);
    expect(validateClaimDefinition({ claimType: 'conditional', dataType: 'number', conditionalRules: [rule] })).toEqual(
      [],
    );
    expect(
      validateClaimDefinition({ claimType: 'dynamic', dataType: 'string', dynamicExpression: 'lower(device.model)' }),
    ).toEqual([]);
    expect(
      validateClaimDefinition({
        claimType: 'external',
        dataType: 'string',
        externalConfig,
        validationRules: { required: true },
      }),
    ).toEqual([]);
  });

  it('requires the configuration field of the claim type', () => {
    expect(validateClaimDefinition({ claimType: 'static', dataType: 'string' })).toEqual([
      { field: 'staticValue', message: expect.stringContaining('is required for a static claim') },
    ]);
    expect(fieldsOf({ claimType: 'conditional', dataType: 'string', conditionalRules: null })).toEqual([
      'conditionalRules',
    ]);
    expect(fieldsOf({ claimType: 'dynamic', dataType: 'string' })).toEqual(['dynamicExpression']);
    expect(validateClaimDefinition({ claimType: 'external', dataType: 'string' })).toEqual([
      { field: 'externalConfig', message: 'is required for an external claim' },
    ]);
  });

  it('checks values against the dataType', () => {
    expect(validateClaimDefinition({ claimType: 'static', dataType: 'boolean', staticValue: 'yes' })).toEqual([
      { field: 'staticValue', message: "value \"yes\" is not 'true' or 'false' (dataType boolean)" },
    ]);
    expect(fieldsOf({ claimType: 'conditional', dataType: 'date', conditionalRules: [rule] })).toEqual([
      'conditionalRules[0].value',
    ]);
  });

  it('names unknown types and leaves values unchecked when the dataType is unknown', () => {
    expect(fieldsOf({ claimType: 'magic', dataType: 'uuid', staticValue: 'x' })).toEqual(['dataType', 'claimType']);
    expect(
      fieldsOf({ claimType: 'static', dataType: 'uuid', staticValue: 'x', validationRules: { allowedValues: ['y'] } }),
    ).toEqual(['dataType']);
    expect(fieldsOf(null)).toEqual(['claim']);
  });

  it('reports conditional rule, expression, external and validation problems by path', () => {
    expect(
      fieldsOf({
        claimType: 'conditional',
        dataType: 'string',
        conditionalRules: [{ ...rule, conditions: [{ field: 'os_version', operator: 'regex', value: '(\\d)\\1' }] }],
      }),
    ).toEqual(['conditionalRules[0].conditions[0].value']);
    expect(
      validateClaimDefinition({ claimType: 'dynamic', dataType: 'string', dynamicExpression: 'process.env' }),
    ).toEqual([{ field: 'dynamicExpression', message: 'unknown identifier: process' }]);
    expect(
      fieldsOf({
        claimType: 'external',
        dataType: 'string',
        externalConfig: { ...externalConfig, endpoint: 'https://169.254.169.254/' },
      }),
    ).toEqual(['externalConfig.endpoint']);
    expect(
      fieldsOf({
        claimType: 'static',
        dataType: 'string',
        staticValue: 'x',
        validationRules: { customValidation: 'value.__proto__' },
      }),
    ).toEqual(['validationRules.customValidation']);
  });

  it('admits private endpoints only when private networks are allowed', () => {
    const local = {
      claimType: 'external',
      dataType: 'string',
      externalConfig: { ...externalConfig, endpoint: 'http://127.0.0.1:8080/x' },
    };
    expect(fieldsOf(local)).toEqual(['externalConfig.endpoint']);
    expect(fieldsOf(local, { allowPrivateNetworks: true })).toEqual([]);
  });

  it('ignores the configuration fields of other types', () => {
    expect(
      validateClaimDefinition({ claimType: 'static', dataType: 'string', staticValue: 'x', dynamicExpression: '((' }),
    ).toEqual([]);
  });
});
