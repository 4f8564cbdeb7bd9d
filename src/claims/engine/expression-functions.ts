import type { JsonValue } from './claim-types.js';
import {
  checkedNumber,
  checkedString,
  describeType,
  expectNumber,
  expectString,
  fail,
  isTruthy,
  numberify,
  stringify,
  valuesEqual,
} from './expression-values.js';
import { compareVersions } from '../../common/version.js';

/** Arguments arrive unevaluated so `if` and `coalesce` can skip the branches they do not take. */
type LazyArgument = () => JsonValue;

export interface ExpressionFunction {
  minArgs: number;
  maxArgs: number;
  call(args: readonly LazyArgument[]): JsonValue;
}

const MAX_VARIADIC_ARGS = 32;

function eager(minArgs: number, maxArgs: number, body: (values: JsonValue[]) => JsonValue): ExpressionFunction {
  return { minArgs, maxArgs, call: (args) => body(args.map((arg) => arg())) };
}

function numeric(name: string, body: (n: number) => number): ExpressionFunction {
  return eager(1, 1, ([value]) => checkedNumber(body(expectNumber(value, name))));
}

function extremum(name: string, pick: (...values: number[]) => number): ExpressionFunction {
  return eager(1, MAX_VARIADIC_ARGS, (values) => {
    const list = values.length === 1 && Array.isArray(values[0]) ? values[0] : values;
    if (list.length === 0) fail(`${name} needs at least one number`);
    return pick(...list.map((value) => expectNumber(value, name)));
  });
}

function stringTest(name: string, test: (haystack: string, needle: string) => boolean): ExpressionFunction {
  return eager(2, 2, ([haystack, needle]) =>
    haystack === null ? false : test(expectString(haystack, name), expectString(needle, name)),
  );
}

function caseChange(name: string, change: (s: string) => string): ExpressionFunction {
  return eager(1, 1, ([value]) => (value === null ? null : change(expectString(value, name))));
}

function round([value, digits]: JsonValue[]): number {
  const n = expectNumber(value, 'round');
  const places = digits === undefined ? 0 : expectNumber(digits, 'round');
  if (!Number.isInteger(places) || places < 0 || places > 10) fail('round digits must be an integer from 0 to 10');
  const factor = 10 ** places;
  return checkedNumber(Math.round(n * factor) / factor);
}

function length([value]: JsonValue[]): number {
  if (value === null) return 0;
  if (typeof value === 'string' || Array.isArray(value)) return value.length;
  return fail(`len expects a string or an array, got ${describeType(value)}`);
}

function contains([haystack, needle]: JsonValue[]): boolean {
  if (haystack === null) return false;
  if (Array.isArray(haystack)) return haystack.some((item) => valuesEqual(item, needle));
  return expectString(haystack, 'contains').includes(expectString(needle, 'contains'));
}

function versionCompare([a, b]: JsonValue[]): number {
  const left = expectString(a, 'versionCompare');
  const right = expectString(b, 'versionCompare');
  const order = compareVersions(left, right);
  if (order === null) {
    fail(`versionCompare cannot read ${JSON.stringify(left)} and ${JSON.stringify(right)} as versions`);
  }
  return Math.sign(order);
}

export const EXPRESSION_FUNCTIONS: ReadonlyMap<string, ExpressionFunction> = new Map([
  ['lower', caseChange('lower', (s) => s.toLowerCase())],
  ['upper', caseChange('upper', (s) => s.toUpperCase())],
  ['concat', eager(1, MAX_VARIADIC_ARGS, (values) => checkedString(values.map(stringify).join('')))],
  ['len', eager(1, 1, length)],
  ['min', extremum('min', Math.min)],
  ['max', extremum('max', Math.max)],
  ['round', eager(1, 2, round)],
  ['floor', numeric('floor', Math.floor)],
  ['ceil', numeric('ceil', Math.ceil)],
  ['abs', numeric('abs', Math.abs)],
  ['contains', eager(2, 2, contains)],
  ['startsWith', stringTest('startsWith', (s, prefix) => s.startsWith(prefix))],
  ['endsWith', stringTest('endsWith', (s, suffix) => s.endsWith(suffix))],
  [
    'if',
    {
      minArgs: 2,
      maxArgs: 3,
      call: ([test, whenTrue, whenFalse]) => (isTruthy(test()) ? whenTrue() : (whenFalse?.() ?? null)),
    },
  ],
  [
    'coalesce',
    {
      minArgs: 1,
      maxArgs: MAX_VARIADIC_ARGS,
      call: (args) => {
        for (const arg of args) {
          const value = arg();
          if (value !== null) return value;
        }
        return null;
      },
    },
  ],
  ['versionCompare', eager(2, 2, versionCompare)],
  ['toString', eager(1, 1, ([value]) => stringify(value))],
  ['toNumber', eager(1, 1, ([value]) => numberify(value))],
]);
