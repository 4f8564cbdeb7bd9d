import jsep from 'jsep';
import { ClaimEvaluationError } from './claim-evaluation-error.js';
import type { DeviceContext, JsonValue } from './claim-types.js';
import { conditionFieldVariable, dataRecord, deviceRecord, isDeviceVariable } from './device-variables.js';
import { EXPRESSION_FUNCTIONS } from './expression-functions.js';
import type { ExpressionFunction } from './expression-functions.js';
import {
  checkedNumber,
  checkedString,
  describeType,
  expectNumber,
  fail,
  isTruthy,
  stringify,
  valuesEqual,
} from './expression-values.js';
import { isOneOf } from './input-checks.js';
import { isJsonObject } from './typed-value.js';

/**
 * A small expression language: jsep parses, and the tree is then checked against an
 * allow-list and converted to the node types below before anything runs. Nothing reaches
 * JavaScript evaluation, and there are no loops or user functions, so evaluation time is
 * bounded by the node count. The grammar is documented in EXPRESSIONS.md.
 */

export const MAX_EXPRESSION_LENGTH = 2000;
export const MAX_EXPRESSION_NODES = 500;
export const MAX_EXPRESSION_DEPTH = 128;

const FORBIDDEN_PROPERTIES = new Set(['__proto__', 'constructor', 'prototype']);
const ARITHMETIC_OPERATORS = ['+', '-', '*', '/', '%'] as const;
const COMPARISON_OPERATORS = ['==', '!=', '===', '!==', '<', '>', '<=', '>='] as const;
const LOGICAL_OPERATORS = ['&&', '||', '??'] as const;
const UNARY_OPERATORS = ['-', '!'] as const;

type ArithmeticOperator = (typeof ARITHMETIC_OPERATORS)[number];
type ComparisonOperator = (typeof COMPARISON_OPERATORS)[number];
type LogicalOperator = (typeof LOGICAL_OPERATORS)[number];
type UnaryOperator = (typeof UNARY_OPERATORS)[number];
type VariableName = 'now' | 'value';
type Namespace = 'device' | 'data';

type ExpressionNode =
  | { kind: 'literal'; value: string | number | boolean | null }
  | { kind: 'array'; elements: ExpressionNode[] }
  | { kind: 'variable'; name: VariableName }
  | { kind: 'namespace'; name: Namespace }
  | { kind: 'member'; object: ExpressionNode; property: ExpressionNode; optional: boolean }
  | { kind: 'unary'; operator: UnaryOperator; argument: ExpressionNode }
  | { kind: 'arithmetic'; operator: ArithmeticOperator; left: ExpressionNode; right: ExpressionNode }
  | { kind: 'comparison'; operator: ComparisonOperator; left: ExpressionNode; right: ExpressionNode }
  | { kind: 'logical'; operator: LogicalOperator; left: ExpressionNode; right: ExpressionNode }
  | { kind: 'conditional'; test: ExpressionNode; consequent: ExpressionNode; alternate: ExpressionNode }
  | { kind: 'call'; fn: ExpressionFunction; args: ExpressionNode[] };

export interface CompiledExpression {
  readonly source: string;
  readonly root: ExpressionNode;
}

export interface ExpressionOptions {
  /** Whether `value` is bound: true for transform and custom validation expressions. */
  allowValue?: boolean;
}

export interface ExpressionScope {
  context: DeviceContext;
  /** Epoch milliseconds, fixed for one evaluation so every claim sees the same instant. */
  now: number;
  value?: JsonValue;
}

class Compiler {
  readonly errors: string[] = [];
  private nodes = 0;

  constructor(private readonly options: ExpressionOptions) {}

  convert(node: jsep.Expression, depth: number): ExpressionNode {
    this.nodes += 1;
    if (this.nodes > MAX_EXPRESSION_NODES) return this.reject(`expression has more than ${MAX_EXPRESSION_NODES} nodes`);
    if (depth > MAX_EXPRESSION_DEPTH) {
      return this.reject(`expression is nested more than ${MAX_EXPRESSION_DEPTH} levels deep`);
    }
    const core = node as jsep.CoreExpression;
    switch (core.type) {
      case 'Literal':
        return this.literal(core);
      case 'Identifier':
        return this.identifier(core.name);
      case 'ArrayExpression':
        return this.array(core, depth);
      case 'MemberExpression':
        return this.member(core, depth);
      case 'UnaryExpression':
        return this.unary(core, depth);
      case 'BinaryExpression':
        return this.binary(core, depth);
      case 'ConditionalExpression':
        return {
          kind: 'conditional',
          test: this.convert(core.test, depth + 1),
          consequent: this.convert(core.consequent, depth + 1),
          alternate: this.convert(core.alternate, depth + 1),
        };
      case 'CallExpression':
        return this.call(core, depth);
      case 'ThisExpression':
        return this.reject('`this` is not available');
      case 'Compound':
      case 'SequenceExpression':
        return this.reject('an expression must be a single expression');
      default:
        return this.reject(`unsupported syntax: ${node.type}`);
    }
  }

  private reject(message: string): ExpressionNode {
    if (!this.errors.includes(message)) this.errors.push(message);
    return { kind: 'literal', value: null };
  }

  private literal(node: jsep.Literal): ExpressionNode {
    const { value } = node;
    if (typeof value === 'number' && !Number.isFinite(value)) return this.reject(`number ${node.raw} is out of range`);
    if (value instanceof RegExp) return this.reject('regular expression literals are not supported');
    return { kind: 'literal', value };
  }

  private identifier(name: string): ExpressionNode {
    if (name === 'now') return { kind: 'variable', name };
    if (name === 'value') {
      return this.options.allowValue
        ? { kind: 'variable', name }
        : this.reject('`value` is only available in transform and validation expressions');
    }
    if (name === 'device' || name === 'data') {
      return this.reject(`\`${name}\` must be followed by a field, as in ${name}.<name>`);
    }
    const variable = conditionFieldVariable(name);
    if (variable) {
      this.nodes += 1;
      return {
        kind: 'member',
        object: { kind: 'namespace', name: 'device' },
        property: { kind: 'literal', value: variable },
        optional: false,
      };
    }
    return this.reject(`unknown identifier: ${name}`);
  }

  private array(node: jsep.ArrayExpression, depth: number): ExpressionNode {
    const elements = node.elements.map((element) =>
      element === null ? this.reject('array holes are not allowed') : this.convert(element, depth + 1),
    );
    return { kind: 'array', elements };
  }

  private member(node: jsep.MemberExpression, depth: number): ExpressionNode {
    const object = this.memberObject(node.object, depth);
    const property = node.computed
      ? this.convert(node.property, depth + 1)
      : ({ kind: 'literal', value: (node.property as jsep.Identifier).name } as const);
    if (property.kind === 'literal' && typeof property.value === 'string') {
      this.checkPropertyName(object, property.value);
    }
    return { kind: 'member', object, property, optional: node.optional === true };
  }

  private memberObject(node: jsep.Expression, depth: number): ExpressionNode {
    const name = (node as jsep.Identifier).name;
    if (node.type === 'Identifier' && (name === 'device' || name === 'data')) {
      this.nodes += 1;
      return { kind: 'namespace', name };
    }
    return this.convert(node, depth + 1);
  }

  private checkPropertyName(object: ExpressionNode, name: string): void {
    if (FORBIDDEN_PROPERTIES.has(name)) this.reject(`property ${name} is not accessible`);
    else if (object.kind === 'namespace' && object.name === 'device' && !isDeviceVariable(name)) {
      this.reject(`unknown device field: ${name}`);
    }
  }

  private unary(node: jsep.UnaryExpression, depth: number): ExpressionNode {
    if (!isOneOf(UNARY_OPERATORS, node.operator)) return this.reject(`unsupported operator: ${node.operator}`);
    return { kind: 'unary', operator: node.operator, argument: this.convert(node.argument, depth + 1) };
  }

  private binary(node: jsep.BinaryExpression, depth: number): ExpressionNode {
    const left = this.convert(node.left, depth + 1);
    const right = this.convert(node.right, depth + 1);
    const { operator } = node;
    if (isOneOf(ARITHMETIC_OPERATORS, operator)) return { kind: 'arithmetic', operator, left, right };
    if (isOneOf(COMPARISON_OPERATORS, operator)) return { kind: 'comparison', operator, left, right };
    if (isOneOf(LOGICAL_OPERATORS, operator)) return { kind: 'logical', operator, left, right };
    return this.reject(`unsupported operator: ${operator}`);
  }

  private call(node: jsep.CallExpression, depth: number): ExpressionNode {
    if (node.callee.type !== 'Identifier') return this.reject('only built-in functions can be called');
    const name = (node.callee as jsep.Identifier).name;
    const fn = EXPRESSION_FUNCTIONS.get(name);
    if (!fn) return this.reject(`unknown function: ${name}`);
    if (node.arguments.length < fn.minArgs || node.arguments.length > fn.maxArgs) {
      const arity = fn.minArgs === fn.maxArgs ? `${fn.minArgs}` : `${fn.minArgs} to ${fn.maxArgs}`;
      this.reject(`${name} takes ${arity} argument${fn.maxArgs === 1 ? '' : 's'}`);
    }
    return { kind: 'call', fn, args: node.arguments.map((arg) => this.convert(arg, depth + 1)) };
  }
}

function parse(source: string, options: ExpressionOptions): { compiled?: CompiledExpression; errors: string[] } {
  if (typeof source !== 'string' || source.trim() === '') return { errors: ['expression is empty'] };
  if (source.length > MAX_EXPRESSION_LENGTH) {
    return { errors: [`expression is longer than ${MAX_EXPRESSION_LENGTH} characters`] };
  }
  let tree: jsep.Expression;
  try {
    tree = jsep(source);
  } catch (error) {
    return { errors: [`syntax error: ${(error as Error).message}`] };
  }
  const compiler = new Compiler(options);
  const root = compiler.convert(tree, 0);
  return compiler.errors.length > 0 ? { errors: compiler.errors } : { compiled: { source, root }, errors: [] };
}

/** Problems that prevent an expression from running; empty when it is valid. */
export function validateExpression(source: string, options: ExpressionOptions = {}): string[] {
  return parse(source, options).errors;
}

export function compileExpression(source: string, options: ExpressionOptions = {}): CompiledExpression {
  const { compiled, errors } = parse(source, options);
  if (!compiled) throw new ClaimEvaluationError(`invalid expression: ${errors.join('; ')}`);
  return compiled;
}

export function evaluateExpression(expression: CompiledExpression, scope: ExpressionScope): JsonValue {
  return new Evaluator(scope).run(expression.root);
}

class Evaluator {
  private device?: Record<string, JsonValue>;
  private data?: Record<string, JsonValue>;

  constructor(private readonly scope: ExpressionScope) {}

  run(node: ExpressionNode): JsonValue {
    switch (node.kind) {
      case 'literal':
        return node.value;
      case 'array':
        return node.elements.map((element) => this.run(element));
      case 'variable':
        return node.name === 'now' ? this.scope.now : (this.scope.value ?? null);
      case 'namespace':
        return this.namespace(node.name);
      case 'member':
        return this.member(node.object, node.property, node.optional);
      case 'unary':
        return node.operator === '!'
          ? !isTruthy(this.run(node.argument))
          : -expectNumber(this.run(node.argument), 'unary -');
      case 'arithmetic':
        return arithmetic(node.operator, this.run(node.left), this.run(node.right));
      case 'comparison':
        return compare(node.operator, this.run(node.left), this.run(node.right));
      case 'logical':
        return this.logical(node.operator, node.left, node.right);
      case 'conditional':
        return isTruthy(this.run(node.test)) ? this.run(node.consequent) : this.run(node.alternate);
      case 'call':
        return node.fn.call(node.args.map((arg) => () => this.run(arg)));
    }
  }

  // Built on first use: most expressions touch one or two fields.
  private namespace(name: Namespace): Record<string, JsonValue> {
    if (name === 'device') return (this.device ??= deviceRecord(this.scope.context));
    return (this.data ??= dataRecord(this.scope.context));
  }

  private member(objectNode: ExpressionNode, propertyNode: ExpressionNode, optional: boolean): JsonValue {
    const object = this.run(objectNode);
    if (object === null && optional) return null;
    return readProperty(object, this.run(propertyNode));
  }

  private logical(operator: LogicalOperator, leftNode: ExpressionNode, rightNode: ExpressionNode): JsonValue {
    const left = this.run(leftNode);
    switch (operator) {
      case '&&':
        return isTruthy(left) ? this.run(rightNode) : left;
      case '||':
        return isTruthy(left) ? left : this.run(rightNode);
      case '??':
        return left ?? this.run(rightNode);
    }
  }
}

/** Own-property lookup only, so nothing inherited (constructors, prototypes) is ever reachable. */
function readProperty(object: JsonValue, key: JsonValue): JsonValue {
  if (typeof key !== 'string' && typeof key !== 'number') {
    fail(`property name must be a string, got ${describeType(key)}`);
  }
  const name = String(key);
  if (FORBIDDEN_PROPERTIES.has(name)) fail(`property ${name} is not accessible`);
  if (Array.isArray(object)) {
    const index = Number(name);
    if (!Number.isInteger(index) || index < 0) fail(`array index must be a non-negative integer, got ${name}`);
    return object[index] ?? null;
  }
  if (!isJsonObject(object)) fail(`cannot read property ${name} of ${describeType(object)}`);
  return Object.hasOwn(object, name) ? object[name] : null;
}

function arithmetic(operator: ArithmeticOperator, left: JsonValue, right: JsonValue): JsonValue {
  if (operator === '+' && (typeof left === 'string' || typeof right === 'string')) {
    return checkedString(stringify(left) + stringify(right));
  }
  const a = expectNumber(left, `operator ${operator}`);
  const b = expectNumber(right, `operator ${operator}`);
  switch (operator) {
    case '+':
      return checkedNumber(a + b);
    case '-':
      return checkedNumber(a - b);
    case '*':
      return checkedNumber(a * b);
    case '/':
      return checkedNumber(a / b);
    case '%':
      return checkedNumber(a % b);
  }
}

function order(operator: ComparisonOperator, left: JsonValue, right: JsonValue): number {
  if (typeof left === 'number' && typeof right === 'number') return left - right;
  if (typeof left === 'string' && typeof right === 'string') return left < right ? -1 : left > right ? 1 : 0;
  return fail(
    `operator ${operator} compares two numbers or two strings, got ${describeType(left)} and ${describeType(right)}`,
  );
}

function compare(operator: ComparisonOperator, left: JsonValue, right: JsonValue): boolean {
  switch (operator) {
    case '==':
    case '===':
      return valuesEqual(left, right);
    case '!=':
    case '!==':
      return !valuesEqual(left, right);
    case '<':
      return order(operator, left, right) < 0;
    case '>':
      return order(operator, left, right) > 0;
    case '<=':
      return order(operator, left, right) <= 0;
    case '>=':
      return order(operator, left, right) >= 0;
  }
}
