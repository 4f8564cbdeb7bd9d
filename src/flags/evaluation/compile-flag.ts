import { compileCondition } from './conditions.js';
import type { CompiledCondition } from './conditions.js';
import type { Environment, FlagDefinition, FlagEnvironmentConfig, FlagRule, FlagValueType } from './flag-types.js';
import { parseFlagValue } from './flag-values.js';
import type { FlagValueParseResult } from './flag-values.js';

export interface CompiledValue {
  readonly raw: string;
  /** Not ok only when stored data no longer fits the flag's type (validation normally prevents it). */
  readonly parsed: FlagValueParseResult;
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

function compileValue(valueType: FlagValueType, raw: string): CompiledValue {
  // Parsed JSON is shared by every request that receives it; freezing stops one caller from altering another's answer.
  return { raw, parsed: deepFreeze(parseFlagValue(valueType, raw)) };
}

function compileRule(valueType: FlagValueType, rule: FlagRule): CompiledRule {
  return {
    id: rule.id,
    name: rule.name,
    priority: rule.priority,
    rolloutPercentage: rule.rolloutPercentage,
    conditions: rule.conditions.map(compileCondition),
    value: compileValue(valueType, rule.value),
  };
}

function compileEnvironment(valueType: FlagValueType, config: FlagEnvironmentConfig): CompiledEnvironment {
  return {
    enabled: config.enabled,
    value: compileValue(valueType, config.value),
    // Array.prototype.sort is stable, so rules of equal priority keep their stored order.
    rules: config.rules
      .filter((rule) => rule.isActive)
      .sort((a, b) => a.priority - b.priority)
      .map((rule) => compileRule(valueType, rule)),
  };
}

export function compileFlag(flag: FlagDefinition): CompiledFlag {
  const { valueType, environments } = flag;
  return {
    id: flag.id,
    key: flag.key,
    valueType,
    defaultValue: compileValue(valueType, flag.defaultValue),
    environments: {
      production: compileEnvironment(valueType, environments.production),
      staging: compileEnvironment(valueType, environments.staging),
      development: compileEnvironment(valueType, environments.development),
    },
  };
}
