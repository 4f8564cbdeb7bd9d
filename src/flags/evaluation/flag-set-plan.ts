import type { CompiledEnvironment, CompiledFlag, CompiledValue } from './compile-flag.js';
import { attributeText, PreparedContext } from './conditions.js';
import { failingPrerequisite, servedValue } from './evaluate-flag.js';
import { ENVIRONMENTS, type Environment, type EvaluationContext } from './flag-types.js';

/**
 * GET /flags for a device without overrides, split once per app and environment into what no
 * device changes and what it does:
 * - a flag whose environment is off, or on with neither prerequisites nor a rule that could fail
 *   (no rules, or a first rule with no condition and no partial rollout), serves the same value to
 *   every device: consecutive such flags are serialised once, as one piece of JSON text;
 * - the other flags are evaluated per request, in the set's order, so the answer is byte for byte
 *   what `evaluateFlagSetJson` writes for the same device;
 * - the context attributes those flags read (and `device_id` where a rollout is partial) are the
 *   device's inputs that matter: with the set's version they decide the answer, so a conditional
 *   fetch is answered from them without evaluating or serialising anything.
 * A device with overrides is not for a plan: its answer also depends on them and on the clock.
 */
export interface FlagSetPlan {
  readonly environments: Readonly<Record<Environment, EnvironmentPlan>>;
}

interface EnvironmentPlan {
  /** JSON text of a run of fixed flags (`"a":true,"b":1`), or a flag to evaluate, in the set's order. */
  readonly parts: readonly (string | CompiledFlag)[];
  /** The attributes the evaluated flags read, sorted; `device_id` when one of them has a partial rollout. */
  readonly inputs: readonly string[];
  /**
   * Each fixed flag's value as canonical JSON, for the prerequisites of evaluated flags; null when
   * no evaluated flag has prerequisites (then no served values are kept at all).
   */
  readonly fixed: ReadonlyMap<string, string | null> | null;
}

/** The value every device gets, or null when it depends on the device. */
function fixedValue(flag: CompiledFlag, config: CompiledEnvironment): CompiledValue | null {
  if (!config.enabled) return flag.defaultValue;
  if (config.prerequisites.length) return null;
  const [first] = config.rules;
  if (!first) return config.value;
  const always = first.conditions.length === 0 && (first.rolloutPercentage === null || first.rolloutPercentage >= 100);
  return always ? first.value : null;
}

function planEnvironment(flags: readonly CompiledFlag[], environment: Environment): EnvironmentPlan {
  const parts: (string | CompiledFlag)[] = [];
  const inputs = new Set<string>();
  const fixed = new Map<string, string | null>();
  let prerequisites = false;
  // Joined rather than appended to: a joined string is one flat piece of memory, where `+=` keeps
  // a tree of every piece appended.
  let run: string[] = [];
  const endRun = () => {
    if (run.length) parts.push(run.join(','));
    run = [];
  };
  for (const flag of flags) {
    const config = flag.environments[environment];
    const value = fixedValue(flag, config);
    if (value) {
      fixed.set(flag.key, value.canonical);
      if (value.parsed.ok) run.push(`${flag.keyJson}:${value.canonical}`);
      continue;
    }
    endRun();
    parts.push(flag);
    if (config.prerequisites.length) prerequisites = true;
    for (const rule of config.rules) {
      for (const condition of rule.conditions) inputs.add(condition.attribute);
      const rollout = rule.rolloutPercentage;
      if (rollout !== null && rollout > 0 && rollout < 100) inputs.add('device_id');
    }
  }
  endRun();
  return { parts, inputs: [...inputs].sort(), fixed: prerequisites ? fixed : null };
}

export function planFlagSet(flags: readonly CompiledFlag[]): FlagSetPlan {
  const environments = {} as Record<Environment, EnvironmentPlan>;
  for (const environment of ENVIRONMENTS) environments[environment] = planEnvironment(flags, environment);
  return { environments };
}

/** ES2024's `String.prototype.isWellFormed` (Node 20 and newer), not in the project's ES2023 lib. */
function isWellFormed(text: string): boolean {
  return (text as string & { isWellFormed(): boolean }).isWellFormed();
}

/**
 * The device's inputs that decide its answer in `environment`, as text: equal texts (for the same
 * set) mean byte-identical answers. For a device without overrides. Each input is written as `-`
 * when missing, else its length, a colon and the text: one way to read any well-formed text back
 * without the cost of JSON-quoting it on every conditional fetch. A text with a lone surrogate
 * (which UTF-8, and so the tag's digest, would turn into U+FFFD) is JSON-quoted instead, after a
 * `j`, as JSON escapes lone surrogates.
 */
export function plannedInputs(plan: FlagSetPlan, environment: Environment, context: EvaluationContext): string {
  const { inputs } = plan.environments[environment];
  let text = environment;
  for (const attribute of inputs) {
    const value = attributeText(context, attribute);
    if (value === null) text += '\n-';
    else text += isWellFormed(value) ? `\n${value.length}:${value}` : `\nj${JSON.stringify(value)}`;
  }
  return text;
}

/** The JSON text of `evaluateFlagSetJson` for a device without overrides, from the plan. */
export function evaluatePlannedJson(plan: FlagSetPlan, environment: Environment, context: EvaluationContext): string {
  const { parts, fixed } = plan.environments[environment];
  const prepared = new PreparedContext(context);
  // Served values of the evaluated flags, then the fixed ones (disjoint keys), for prerequisites.
  const served = fixed ? new Map<string, string | null>() : null;
  const lookup = served && { get: (key: string) => (served.has(key) ? served.get(key) : fixed!.get(key)) };
  let json = '';
  for (const part of parts) {
    if (typeof part === 'string') {
      json += json ? `,${part}` : part;
      continue;
    }
    const config = part.environments[environment];
    const value =
      lookup && config.prerequisites.length && failingPrerequisite(config.prerequisites, lookup)
        ? part.defaultValue
        : servedValue(part, config, prepared);
    if (value.parsed.ok) json += json ? `,${part.keyJson}:${value.canonical}` : `${part.keyJson}:${value.canonical}`;
    served?.set(part.key, value.canonical);
  }
  return `{${json}}`;
}
