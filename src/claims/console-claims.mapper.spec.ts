import 'reflect-metadata';
import { describe, expect, it } from '@jest/globals';
import { plainToInstance } from 'class-transformer';
import { invalidClaim, InvalidClaimException } from './claims.exceptions.js';
import { ConsolePreviewClaimDto, ConsoleUpdateClaimDto } from './console-claims.dto.js';
import {
  assertConsoleUpdate,
  consoleDeviceOf,
  consoleFieldPath,
  fromConsoleUpdate,
  inConsoleCase,
} from './console-claims.mapper.js';

const claim = { claimKey: 'plan', claimType: 'static' } as const;

function refusal(run: () => unknown): InvalidClaimException {
  try {
    run();
  } catch (error) {
    if (error instanceof InvalidClaimException) return error;
    throw error;
  }
  throw new Error('nothing was refused');
}

describe('console claims mapper', () => {
  it('renames only the top-level name of a field path to snake_case', () => {
    expect(consoleFieldPath('conditionalRules[0].conditions[1].value')).toBe(
      'conditional_rules[0].conditions[1].value',
    );
    expect(consoleFieldPath('externalConfig.responseMapping.jsonPath')).toBe(
      'external_config.responseMapping.jsonPath',
    );
    expect(consoleFieldPath('body')).toBe('body');
  });

  it('gives the session model of an update, nested objects untouched', () => {
    const dto = plainToInstance(ConsoleUpdateClaimDto, {
      claim_name: 'Plan',
      is_active: false,
      validation_rules: { minLength: 2 },
    });
    expect(fromConsoleUpdate(dto)).toEqual({ claimName: 'Plan', isActive: false, validationRules: { minLength: 2 } });
  });

  it('names the fields of an invalid-claim refusal in snake_case, under a prefix when asked', async () => {
    const refused = Promise.reject(invalidClaim([{ field: 'staticValue', message: 'must be a number' }]));
    await expect(inConsoleCase(refused, 'claim.')).rejects.toMatchObject({
      message: 'claim.static_value: must be a number',
      details: { hint: 'Check the "claim.static_value" field' },
    });
    await expect(inConsoleCase(Promise.resolve(7))).resolves.toBe(7);
  });

  it('refuses an update with nothing to apply, naming the configuration field of the claim type', () => {
    for (const patch of [{}, { claimKey: 'plan' }, { claimType: 'static' as const }, { dynamicExpression: 'x' }]) {
      expect(refusal(() => assertConsoleUpdate(patch, claim)).problems).toEqual([
        {
          field: 'body',
          message:
            'has no updatable field; send claim_name, data_type, description, priority, is_active, validation_rules or static_value',
        },
      ]);
    }
    expect(() => assertConsoleUpdate({ staticValue: 'gold' }, claim)).not.toThrow();
    expect(() => assertConsoleUpdate({ claimKey: 'other' }, claim)).not.toThrow();
  });

  it('takes the device from the top level, overridden by device_context', () => {
    const body = plainToInstance(ConsolePreviewClaimDto, {
      risk_score: 40,
      country: 'de',
      additional_data: { tier: 'a' },
      device_context: { risk_score: 70, jailbreak_detected: true },
    });
    expect(consoleDeviceOf(body)).toMatchObject({
      keyId: 'preview-device',
      riskScore: 70,
      country: 'DE',
      jailbreakDetected: true,
      deviceIntegrity: 'compromised',
      additionalData: { tier: 'a' },
    });
  });
});
