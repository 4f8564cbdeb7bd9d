import { ValidateBy, type ValidationOptions } from 'class-validator';

/**
 * Whether `value` is exactly a decimal of at most `places` fraction digits. class-validator's
 * `maxDecimalPlaces` counts the digits of `String(value)`, which reads `1e-7` as having none, so
 * such a number slipped through and failed further down; rounding to the places and comparing
 * catches every spelling.
 */
export function hasAtMostDecimalPlaces(value: unknown, places: number): boolean {
  return typeof value === 'number' && Number.isFinite(value) && Number(value.toFixed(places)) === value;
}

/** A finite number with at most `places` decimals (not `1e-7` where 3 are allowed), and never `-0`. */
export function IsDecimalNumber(places: number, options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isDecimalNumber',
      constraints: [places],
      validator: {
        validate: (value: unknown) => hasAtMostDecimalPlaces(value, places) && !Object.is(value, -0),
        defaultMessage: () => `$property must be a number with at most ${places} decimal places`,
      },
    },
    options,
  );
}
