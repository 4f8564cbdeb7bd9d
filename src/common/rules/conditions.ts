import { compileLinearRegex } from './linear-regex.js';
import { parseListValue, type ListSyntax } from './list-value.js';
import { CONDITION_OPERATORS } from './operators.js';
import { compareOperands, operandsEqual, toOperand, type Operand, type ValueKind } from './typed-comparison.js';

/**
 * One condition (`<attribute> <operator> <value>`) as flag rules and claim conditions both mean it,
 * compiled once into a test of a present value. What an absent value does is the caller's rule:
 * flags fail every operator, claims pass the negated ones.
 *
 * - `equals`, `in_list` and the ordering operators compare typed, by the kind of the attribute
 *   (typed-comparison.ts); a pair that cannot be ordered fails every ordering operator.
 * - `contains`, `starts_with`, `ends_with` and `regex` look at the text as written, whatever the kind;
 *   `regex` runs on the linear-time engine (linear-regex.ts).
 * - `not_equals`, `not_contains` and `not_in_list` are the exact negations of their positive forms.
 */
export type ConditionTest = (actual: Operand) => boolean;

export interface ConditionSource {
  readonly kind: ValueKind;
  /** A string, so that stored data that predates validation gets an answer rather than a crash. */
  readonly operator: string;
  readonly value: string;
}

export type CompiledConditionTest =
  | { readonly ok: true; readonly test: ConditionTest }
  | { readonly ok: false; readonly field: 'operator' | 'value'; readonly message: string };

export function compileConditionTest(condition: ConditionSource, lists: ListSyntax): CompiledConditionTest {
  const { kind, operator, value } = condition;
  switch (operator) {
    case 'equals':
    case 'not_equals': {
      const expected = toOperand(value, kind);
      const wanted = operator === 'equals';
      return accept((actual) => operandsEqual(kind, actual, expected) === wanted);
    }
    case 'greater_than':
      return accept(ordered(kind, value, (sign) => sign > 0));
    case 'less_than':
      return accept(ordered(kind, value, (sign) => sign < 0));
    case 'greater_than_or_equal':
      return accept(ordered(kind, value, (sign) => sign >= 0));
    case 'less_than_or_equal':
      return accept(ordered(kind, value, (sign) => sign <= 0));
    case 'contains':
      return accept((actual) => actual.text.includes(value));
    case 'not_contains':
      return accept((actual) => !actual.text.includes(value));
    case 'starts_with':
      return accept((actual) => actual.text.startsWith(value));
    case 'ends_with':
      return accept((actual) => actual.text.endsWith(value));
    case 'regex': {
      const compiled = compileLinearRegex(value);
      if (!compiled.ok) return { ok: false, field: 'value', message: compiled.message };
      const { regex } = compiled;
      return accept((actual) => regex.test(actual.text));
    }
    case 'in_list':
    case 'not_in_list': {
      const items = parseListValue(value, lists).map((item) => toOperand(item, kind));
      const wanted = operator === 'in_list';
      return accept((actual) => items.some((item) => operandsEqual(kind, actual, item)) === wanted);
    }
    default:
      return { ok: false, field: 'operator', message: `must be one of ${CONDITION_OPERATORS.join(', ')}` };
  }
}

function accept(test: ConditionTest): CompiledConditionTest {
  return { ok: true, test };
}

function ordered(kind: ValueKind, value: string, accepts: (sign: number) => boolean): ConditionTest {
  const expected = toOperand(value, kind);
  return (actual) => {
    const sign = compareOperands(kind, actual, expected);
    return sign !== null && accepts(sign);
  };
}
