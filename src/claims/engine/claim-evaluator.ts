import { ClaimEvaluationError } from './claim-evaluation-error.js';
import type { ClaimDefinition, ClaimTestResult, ClaimValue, DeviceContext } from './claim-types.js';
import { evaluateConditionalRules } from './conditional-rules.js';
import { compileExpression, evaluateExpression } from './expression-language.js';
import type { ExpressionScope } from './expression-language.js';
import type { ExternalClaimFetcher } from './external-claim-fetcher.js';
import { serializeClaimValue, toRawValue, toTypedValue } from './typed-value.js';
import { applyValidationRules } from './validation-rules.js';

export interface ClaimEvaluationDeps {
  /** Needed only for `external` claims; without it they fail with an error. */
  fetcher?: ExternalClaimFetcher;
  /** Epoch milliseconds for the `now` variable. */
  now?: () => number;
}

export interface ClaimEvaluation {
  result: ClaimTestResult;
  /** The typed value, or null when the claim produced none or failed. */
  value: ClaimValue | null;
}

export interface ClaimsEvaluation {
  /** Active claims that produced a valid value, in priority order. */
  claims: Record<string, ClaimValue>;
  results: ClaimTestResult[];
}

/** What a claim's source produced: its string form (null for "no value") or the reason it failed. */
type Produced = { raw: string | null } | { error: unknown };

function produce(source: () => string | null): Produced {
  try {
    return { raw: source() };
  } catch (error) {
    return { error };
  }
}

async function produceExternal(
  claim: ClaimDefinition,
  context: DeviceContext,
  deps: ClaimEvaluationDeps,
): Promise<Produced> {
  try {
    if (!deps.fetcher) throw new ClaimEvaluationError('external claims cannot be evaluated here');
    return { raw: toRawValue(await deps.fetcher.resolve(claim, context)) };
  } catch (error) {
    return { error };
  }
}

function staticValue(claim: ClaimDefinition): string {
  if (typeof claim.staticValue !== 'string') throw new ClaimEvaluationError('staticValue is missing');
  return claim.staticValue;
}

function dynamicValue(claim: ClaimDefinition, scope: ExpressionScope): string | null {
  if (typeof claim.dynamicExpression !== 'string') throw new ClaimEvaluationError('dynamicExpression is missing');
  return toRawValue(evaluateExpression(compileExpression(claim.dynamicExpression), scope));
}

function errorMessage(error: unknown): string {
  if (error instanceof ClaimEvaluationError) return error.message;
  return `unexpected error: ${error instanceof Error ? error.message : String(error)}`;
}

function typeAndValidate(
  claim: ClaimDefinition,
  raw: string | null,
  scope: ExpressionScope,
): { value: ClaimValue | null; errors: string[] } {
  const rules = claim.validationRules;
  if (raw === null) return { value: null, errors: rules?.required ? ['value is required'] : [] };
  const value = toTypedValue(raw, claim.dataType);
  return { value, errors: rules ? applyValidationRules(rules, value, claim.dataType, scope) : [] };
}

function settle(claim: ClaimDefinition, scope: ExpressionScope, started: number, produced: Produced): ClaimEvaluation {
  const raw = 'raw' in produced ? produced.raw : null;
  let value: ClaimValue | null = null;
  let errors: string[];
  if ('error' in produced) {
    errors = [errorMessage(produced.error)];
  } else {
    try {
      ({ value, errors } = typeAndValidate(claim, raw, scope));
    } catch (error) {
      errors = [errorMessage(error)];
    }
  }
  const failed = errors.length > 0;
  return {
    result: {
      claimKey: claim.claimKey,
      // On failure the untyped value is shown, so a preview explains what was rejected.
      evaluatedValue: value !== null ? serializeClaimValue(value) : raw,
      dataType: claim.dataType,
      evaluationTime: Math.round((performance.now() - started) * 1000) / 1000,
      errors: failed ? errors : null,
    },
    value: failed ? null : value,
  };
}

/**
 * Evaluates one claim, active or not (previews test inactive claims too). Never throws:
 * failures are reported in `result.errors`.
 */
export async function evaluateClaim(
  claim: ClaimDefinition,
  context: DeviceContext,
  deps: ClaimEvaluationDeps = {},
): Promise<ClaimEvaluation> {
  const started = performance.now();
  const scope: ExpressionScope = { context, now: (deps.now ?? Date.now)() };
  switch (claim.claimType) {
    case 'static':
      return settle(
        claim,
        scope,
        started,
        produce(() => staticValue(claim)),
      );
    case 'conditional':
      return settle(
        claim,
        scope,
        started,
        produce(() => evaluateConditionalRules(claim.conditionalRules, context)),
      );
    case 'dynamic':
      return settle(
        claim,
        scope,
        started,
        produce(() => dynamicValue(claim, scope)),
      );
    case 'external':
      return settle(claim, scope, started, await produceExternal(claim, context, deps));
    default:
      // Reached only by definitions stored without validation.
      return settle(claim, scope, started, {
        error: new ClaimEvaluationError(`unknown claimType ${String(claim.claimType)}`),
      });
  }
}

function byPriority(a: ClaimDefinition, b: ClaimDefinition): number {
  return a.priority - b.priority || (a.claimKey < b.claimKey ? -1 : a.claimKey > b.claimKey ? 1 : 0);
}

/**
 * Evaluates the active claims for a token. External claims are fetched concurrently; the
 * result keeps priority order. A failing claim is left out of `claims` and explained in `results`.
 */
export async function evaluateClaims(
  claims: readonly ClaimDefinition[],
  context: DeviceContext,
  deps: ClaimEvaluationDeps = {},
): Promise<ClaimsEvaluation> {
  const now = (deps.now ?? Date.now)();
  const active = claims.filter((claim) => claim.isActive).sort(byPriority);
  const evaluations = await Promise.all(
    active.map((claim) => evaluateClaim(claim, context, { ...deps, now: () => now })),
  );
  const entries = evaluations.flatMap(({ result, value }) =>
    value === null ? [] : [[result.claimKey, value] as const],
  );
  return { claims: Object.fromEntries(entries), results: evaluations.map(({ result }) => result) };
}
