import { ValidateBy, type ValidationArguments, type ValidationOptions } from 'class-validator';
import { claimKeyProblem } from './claim-input.js';

export const MAX_ADDITIONAL_DATA_ENTRIES = 50;
const MAX_ADDITIONAL_DATA_KEY_LENGTH = 100;
const MAX_ADDITIONAL_DATA_VALUE_LENGTH = 1000;

/** The claim key rules (format, length, reserved names) as one class-validator constraint. */
export function IsClaimKey(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isClaimKey',
      validator: {
        validate: (value: unknown) => claimKeyProblem(value) === null,
        defaultMessage: (args?: ValidationArguments) => `${args?.property} ${claimKeyProblem(args?.value)}`,
      },
    },
    options,
  );
}

function isAdditionalData(value: unknown): boolean {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const entries = Object.entries(value);
  return (
    entries.length <= MAX_ADDITIONAL_DATA_ENTRIES &&
    entries.every(
      ([key, item]) =>
        key.length <= MAX_ADDITIONAL_DATA_KEY_LENGTH &&
        typeof item === 'string' &&
        item.length <= MAX_ADDITIONAL_DATA_VALUE_LENGTH,
    )
  );
}

/** `additionalData` of a test context: a small map of string values. */
export function IsAdditionalData(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isAdditionalData',
      validator: {
        validate: isAdditionalData,
        defaultMessage: (args?: ValidationArguments) =>
          `${args?.property} must be an object of at most ${MAX_ADDITIONAL_DATA_ENTRIES} string values ` +
          `(keys up to ${MAX_ADDITIONAL_DATA_KEY_LENGTH}, values up to ${MAX_ADDITIONAL_DATA_VALUE_LENGTH} characters)`,
      },
    },
    options,
  );
}
