import { compileCondition } from './conditions.js';
import type { CompiledCondition } from './conditions.js';
import type {
  Environment,
  FlagCondition,
  FlagDefinition,
  FlagEnvironmentConfig,
  FlagRule,
  FlagValueType,
} from './flag-types.js';
import { parseFlagValue } from './flag-values.js';
import type { FlagValueParseResult } from './flag-values.js';

export interface CompiledValue {
  readonly raw: string;
  /** Not ok only when stored data no longer fits the flag's type (validation normally prevents it). */
  readonly parsed: FlagValueParseResult;
  /** The typed value as JSON text, what prerequisites compare; null when it does not parse. */
  readonly canonical: string | null;
}

export interface CompiledPrerequisite {
  readonly flagKey: string;
  readonly value: string;
  /** `value` typed by the prerequisite flag's type, as JSON text; null when it cannot match. */
  readonly expected: string | null;
}

export interface CompiledRule {
  readonly id: string;
  readonly name: string;
  readonly priority: number;
  readonly rolloutPercentage: number | null;
  readonly conditions: readonly CompiledCondition[];
  readonly value: CompiledValue;
}

export interface CompiledEnvironment {
  readonly enabled: boolean;
  /** Checked before the rules, against values evaluated earlier in the same pass. */
  readonly prerequisites: readonly CompiledPrerequisite[];
  readonly value: CompiledValue;
  /** Active rules only, lowest priority first. */
  readonly rules: readonly CompiledRule[];
}

/**
 * A flag with every regex, version, number, list and value parsed once, so that
 * evaluating it per request does no parsing. Build it when a flag is loaded or changed and
 * reuse it across requests.
 */
export interface CompiledFlag {
  readonly id: string;
  readonly key: string;
  /** The key as a JSON string, written once so that GET /flags joins text instead of stringifying. */
  readonly keyJson: string;
  readonly valueType: FlagValueType;
  readonly defaultValue: CompiledValue;
  readonly environments: Readonly<Record<Environment, CompiledEnvironment>>;
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

/**
 * What the flags of one set share instead of holding copies: equal values, equal conditions and
 * equal lists of conditions are compiled once per set (an app's flags mostly repeat the same
 * handful of values and targeting), which is most of a flag store's memory otherwise. Shared
 * values are frozen, and conditions hold no per-flag state, so sharing cannot leak between flags.
 */
class SharedParts {
  private readonly values = new Map<string, CompiledValue>();
  private readonly conditions = new Map<string, CompiledCondition>();
  private readonly conditionLists = new Map<string, readonly CompiledCondition[]>();
  private readonly disabled = new Map<CompiledValue, CompiledEnvironment>();
  private readonly texts = new Map<string, string>();

  value(valueType: FlagValueType, raw: string): CompiledValue {
    const key = `${valueType}\u0000${raw}`;
    let value = this.values.get(key);
    if (!value) this.values.set(key, (value = compileValue(valueType, raw)));
    return value;
  }

  conditionList(conditions: readonly FlagCondition[]): readonly CompiledCondition[] {
    if (conditions.length === 0) return NONE;
    const keys = conditions.map((condition) =>
      JSON.stringify([condition.attribute, condition.operator, condition.value]),
    );
    const listKey = keys.join(',');
    let list = this.conditionLists.get(listKey);
    if (!list) {
      list = Object.freeze(
        conditions.map((condition, index) => {
          let compiled = this.conditions.get(keys[index]);
          if (!compiled) this.conditions.set(keys[index], (compiled = Object.freeze(compileCondition(condition))));
          return compiled;
        }),
      );
      this.conditionLists.set(listKey, list);
    }
    return list;
  }

  /** A disabled environment: nothing but the value it serves, one object per value. */
  disabledEnvironment(value: CompiledValue): CompiledEnvironment {
    let environment = this.disabled.get(value);
    if (!environment)
      this.disabled.set(value, (environment = { enabled: false, prerequisites: NONE, value, rules: NONE }));
    return environment;
  }

  /** One copy of a text that repeats (rule names). */
  text(value: string): string {
    const held = this.texts.get(value);
    if (held !== undefined) return held;
    this.texts.set(value, value);
    return value;
  }
}

const NONE: readonly never[] = Object.freeze([]);

function compileValue(valueType: FlagValueType, raw: string): CompiledValue {
  // Parsed JSON is shared by every request that receives it; freezing stops one caller from altering another's answer.
  const parsed = deepFreeze(parseFlagValue(valueType, raw));
  return Object.freeze({ raw, parsed, canonical: canonicalOf(parsed) });
}

export function canonicalOf(parsed: FlagValueParseResult): string | null {
  return parsed.ok ? JSON.stringify(parsed.value) : null;
}

function compileRule(valueType: FlagValueType, rule: FlagRule, shared: SharedParts): CompiledRule {
  return {
    id: rule.id,
    name: shared.text(rule.name),
    priority: rule.priority,
    rolloutPercentage: rule.rolloutPercentage,
    conditions: shared.conditionList(rule.conditions),
    value: shared.value(valueType, rule.value),
  };
}

/** The type of each flag of the set by key, so prerequisites compare typed values. */
type TypesByKey = ReadonlyMap<string, FlagValueType>;

function compileEnvironment(
  valueType: FlagValueType,
  config: FlagEnvironmentConfig,
  types: TypesByKey,
  shared: SharedParts,
): CompiledEnvironment {
  // A disabled environment serves the flag's default: its rules and prerequisites are never
  // consulted, so they are not compiled (most of a flag store's memory otherwise).
  if (!config.enabled) return shared.disabledEnvironment(shared.value(valueType, config.value));
  const prerequisites = config.prerequisites ?? [];
  const rules = config.rules.filter((rule) => rule.isActive);
  return {
    enabled: config.enabled,
    prerequisites: prerequisites.length
      ? prerequisites.map((prerequisite) => {
          const type = types.get(prerequisite.flagKey);
          return {
            flagKey: prerequisite.flagKey,
            value: prerequisite.value,
            expected: type ? canonicalOf(parseFlagValue(type, prerequisite.value)) : null,
          };
        })
      : NONE,
    value: shared.value(valueType, config.value),
    // Array.prototype.sort is stable, so rules of equal priority keep their stored order.
    rules: rules.length
      ? rules.sort((a, b) => a.priority - b.priority).map((rule) => compileRule(valueType, rule, shared))
      : NONE,
  };
}

/** One flag on its own: prerequisites naming other flags never match (compileFlagSet types them). */
export function compileFlag(flag: FlagDefinition): CompiledFlag {
  return compileWith(flag, new Map(), new SharedParts());
}

/** One flag; its prerequisites are typed by `types` (the flags of its app), unknown keys never match. */
function compileWith(flag: FlagDefinition, types: TypesByKey, shared: SharedParts): CompiledFlag {
  const { valueType, environments } = flag;
  return {
    id: flag.id,
    key: flag.key,
    keyJson: JSON.stringify(flag.key),
    valueType,
    defaultValue: shared.value(valueType, flag.defaultValue),
    environments: {
      production: compileEnvironment(valueType, environments.production, types, shared),
      staging: compileEnvironment(valueType, environments.staging, types, shared),
      development: compileEnvironment(valueType, environments.development, types, shared),
    },
  };
}

/**
 * An app's flags compiled and put in topological order of their prerequisites (in every
 * environment): each flag comes after every flag it depends on, so one pass evaluates each flag
 * once, its prerequisites already known. Ties go by key, so the order is stable. Flags caught in
 * a cycle (the service refuses them; stored data could still hold one) come last, and a
 * prerequisite not yet evaluated when it is needed fails.
 */
export function compileFlagSet(definitions: readonly FlagDefinition[]): CompiledFlag[] {
  const types = new Map(definitions.map((flag) => [flag.key, flag.valueType]));
  const byKey = new Map(definitions.map((flag) => [flag.key, flag]));
  const dependents = new Map<string, string[]>();
  const waiting = new Map<string, number>();
  for (const flag of definitions) {
    const needs = new Set(prerequisiteKeys(flag).filter((key) => byKey.has(key) && key !== flag.key));
    waiting.set(flag.key, needs.size);
    for (const key of needs) dependents.set(key, [...(dependents.get(key) ?? []), flag.key]);
  }
  const ready = definitions.filter((flag) => waiting.get(flag.key) === 0).map((flag) => flag.key);
  ready.sort();
  const ordered: string[] = [];
  while (ready.length) {
    const key = ready.shift()!;
    ordered.push(key);
    const released: string[] = [];
    for (const dependent of dependents.get(key) ?? []) {
      const left = waiting.get(dependent)! - 1;
      waiting.set(dependent, left);
      if (left === 0) released.push(dependent);
    }
    if (released.length) {
      ready.push(...released);
      ready.sort();
    }
  }
  const placed = new Set(ordered);
  const cyclic = definitions.map((flag) => flag.key).filter((key) => !placed.has(key));
  const shared = new SharedParts();
  return [...ordered, ...cyclic.sort()].map((key) => compileWith(byKey.get(key)!, types, shared));
}

/** The keys a flag names as prerequisites, in any environment. */
export function prerequisiteKeys(flag: Pick<FlagDefinition, 'environments'>): string[] {
  return Object.values(flag.environments).flatMap((config) => (config.prerequisites ?? []).map((p) => p.flagKey));
}
