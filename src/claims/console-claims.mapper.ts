import { fromSnakeCase, snakeCase } from '../common/validation/case-mapping.js';
import {
  CONFIGURATION_FIELD,
  hasUpdatableField,
  immutableFieldProblems,
  type ClaimInput,
  type ClaimPatch,
  type ClaimTestInput,
} from './claim-input.js';
import type { CreateClaimDto, DeviceProfileDto, TestClaimDefinitionDto, UpdateClaimDto } from './claims.dto.js';
import { InvalidClaimException, invalidClaim } from './claims.exceptions.js';
import type {
  ConsoleCreateClaimDto,
  ConsoleDeviceContextDto,
  ConsolePreviewClaimDto,
  ConsoleTestClaimDefinitionDto,
  ConsoleUpdateClaimDto,
} from './console-claims.dto.js';
import type { CustomClaim } from './custom-claim.entity.js';
import { previewDeviceContext } from './preview-device.js';

/*
 * The console surface's case at its edge: bodies arrive in snake_case and reach ClaimsService in
 * the session model's camelCase; the fields a refusal names go back out in snake_case.
 */

export const fromConsoleCreate = (dto: ConsoleCreateClaimDto): ClaimInput => fromSnakeCase<CreateClaimDto>(dto);

export const fromConsoleUpdate = (dto: ConsoleUpdateClaimDto): ClaimPatch => fromSnakeCase<UpdateClaimDto>(dto);

export const fromConsoleTestDefinition = (dto: ConsoleTestClaimDefinitionDto): ClaimTestInput =>
  fromSnakeCase<TestClaimDefinitionDto>(dto);

function profileOf({ additional_data: _additionalData, ...fields }: ConsoleDeviceContextDto) {
  return fromSnakeCase<Partial<DeviceProfileDto>>(fields);
}

/** The device of a test or preview: top-level fields, overridden by those nested under `device_context`. */
export function consoleDeviceOf({ device_context: nested, ...context }: ConsolePreviewClaimDto) {
  return previewDeviceContext(
    { ...profileOf(context), ...(nested ? profileOf(nested) : {}) },
    nested?.additional_data ?? context.additional_data,
  );
}

/** A camelCase field path (`conditionalRules[0].value`) with its top-level name in snake_case. */
export function consoleFieldPath(path: string): string {
  return path.replace(/^[A-Za-z]+/, snakeCase);
}

/**
 * Runs a ClaimsService call, naming the fields of an invalid-claim refusal as the console does:
 * the top-level name in snake_case (nested objects keep their camelCase schema), under `prefix`
 * for a claim nested in the body.
 */
export async function inConsoleCase<T>(work: Promise<T>, prefix = ''): Promise<T> {
  try {
    return await work;
  } catch (error) {
    if (!(error instanceof InvalidClaimException)) throw error;
    throw invalidClaim(
      error.problems.map(({ field, message }) => ({ field: prefix + consoleFieldPath(field), message })),
    );
  }
}

/**
 * The console refuses an update with nothing it could apply: an unchanged key or type, or only
 * another type's configuration field, is not an update. A changed key or type is left to the
 * service, which refuses it by name.
 */
export function assertConsoleUpdate(patch: ClaimPatch, claim: Pick<CustomClaim, 'claimKey' | 'claimType'>): void {
  if (immutableFieldProblems(patch, claim).length > 0 || hasUpdatableField(patch, claim.claimType)) return;
  const field = snakeCase(CONFIGURATION_FIELD[claim.claimType]);
  throw invalidClaim([
    {
      field: 'body',
      message: `has no updatable field; send claim_name, data_type, description, priority, is_active, validation_rules or ${field}`,
    },
  ]);
}
