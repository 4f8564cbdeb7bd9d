import { Script, createContext } from 'node:vm';
import { ClaimEvaluationError } from './claim-evaluation-error.js';

export const MAX_REGEX_LENGTH = 256;
/** Backstop for super-linear patterns the static check cannot see, such as `a*a*a*b`. */
export const REGEX_TIMEOUT_MS = 50;

interface Quantifier {
  length: number;
  /** Whether the atom may match more than once; a bare `?` does not repeat. */
  repeats: boolean;
}

const BRACE_QUANTIFIER = /^\{(\d+)(,(\d*))?\}/;

function readQuantifier(pattern: string, index: number): Quantifier | null {
  const char = pattern[index];
  let quantifier: Quantifier | null = null;
  if (char === '*' || char === '+') quantifier = { length: 1, repeats: true };
  else if (char === '?') quantifier = { length: 1, repeats: false };
  else if (char === '{') {
    const match = BRACE_QUANTIFIER.exec(pattern.slice(index));
    if (match) {
      const max = match[2] === undefined ? Number(match[1]) : match[3] === '' ? Infinity : Number(match[3]);
      quantifier = { length: match[0].length, repeats: max > 1 };
    }
  }
  if (quantifier && pattern[index + quantifier.length] === '?') quantifier.length += 1;
  return quantifier;
}

/** Length of the `?:`, `?=`, `?<name>`... prefix after `(`, so its `?` is not read as a quantifier. */
function groupPrefixLength(pattern: string, index: number): number {
  if (pattern[index] !== '?') return 0;
  const next = pattern[index + 1];
  if (next === '<' && pattern[index + 2] !== '=' && pattern[index + 2] !== '!') {
    const end = pattern.indexOf('>', index);
    return end === -1 ? 1 : end - index + 1;
  }
  return next === '<' ? 3 : 2;
}

function skipCharacterClass(pattern: string, index: number): number {
  let i = index + 1;
  while (i < pattern.length && pattern[i] !== ']') i += pattern[i] === '\\' ? 2 : 1;
  return i + 1;
}

/**
 * Finds the constructs that make backtracking exponential: a repeated group that itself
 * contains a quantifier (`(a+)+`, `(\d*){2,}`) and backreferences. Character classes and
 * escapes are skipped so `[+*]` or `\+` are not mistaken for quantifiers.
 */
function unsafeConstruct(pattern: string): string | null {
  // One entry per open group: whether a quantifier occurs inside it.
  const groups: boolean[] = [false];
  let i = 0;
  while (i < pattern.length) {
    const char = pattern[i];
    if (char === '\\') {
      if (/[1-9k]/.test(pattern[i + 1] ?? '')) return 'backreferences are not allowed';
      i += 2;
    } else if (char === '[') {
      i = skipCharacterClass(pattern, i);
    } else if (char === '(') {
      groups.push(false);
      i += 1 + groupPrefixLength(pattern, i + 1);
    } else if (char === ')') {
      const innerQuantified = groups.length > 1 ? groups.pop() === true : false;
      const quantifier = readQuantifier(pattern, i + 1);
      if (quantifier?.repeats && innerQuantified) return 'nested quantifiers are not allowed';
      if (innerQuantified || quantifier) groups[groups.length - 1] = true;
      i += 1 + (quantifier?.length ?? 0);
    } else {
      const quantifier = readQuantifier(pattern, i);
      if (quantifier) groups[groups.length - 1] = true;
      i += quantifier?.length ?? 1;
    }
  }
  return null;
}

/** Why a pattern is refused, or null when it may be compiled. */
export function regexProblem(pattern: string): string | null {
  if (pattern.length === 0) return 'pattern is empty';
  if (pattern.length > MAX_REGEX_LENGTH) return `pattern is longer than ${MAX_REGEX_LENGTH} characters`;
  const unsafe = unsafeConstruct(pattern);
  if (unsafe) return unsafe;
  try {
    new RegExp(pattern);
  } catch (error) {
    return `invalid pattern: ${(error as Error).message}`;
  }
  return null;
}

export function compileSafeRegex(pattern: string): RegExp {
  const problem = regexProblem(pattern);
  if (problem) throw new ClaimEvaluationError(problem);
  return new RegExp(pattern);
}

// A vm script is the only way to put a time limit on a synchronous RegExp match.
const sandbox = createContext(Object.create(null) as object);
const testScript = new Script('pattern.test(subject)');

export function testSafeRegex(pattern: RegExp, subject: string): boolean {
  sandbox.pattern = pattern;
  sandbox.subject = subject;
  try {
    return testScript.runInContext(sandbox, { timeout: REGEX_TIMEOUT_MS }) === true;
  } catch (error) {
    if ((error as { code?: string }).code === 'ERR_SCRIPT_EXECUTION_TIMEOUT') {
      throw new ClaimEvaluationError(`pattern ${pattern.source} took too long to match`);
    }
    throw error;
  } finally {
    sandbox.pattern = undefined;
    sandbox.subject = undefined;
  }
}
