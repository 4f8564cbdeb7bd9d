/**
 * Rule regexes are written by tenants and run on the request path, so a pattern that can
 * backtrack catastrophically would let one tenant stall the event loop for everyone. V8's
 * default engine backtracks, so patterns are screened statically before use.
 *
 * The screen is conservative (it rejects some harmless patterns such as `(\.\d+)*`) and
 * targets the classic exponential shapes: a repeated group whose body itself has a
 * variable-length quantifier, and backreferences. It does not prove safety for every
 * pattern (overlapping alternation like `(a|a)*` passes), which is why the length cap also
 * applies.
 */
export const MAX_REGEX_LENGTH = 200;

export type SafeRegexResult =
  { readonly ok: true; readonly regex: RegExp } | { readonly ok: false; readonly message: string };

export function compileSafeRegex(pattern: string): SafeRegexResult {
  if (pattern.length > MAX_REGEX_LENGTH) {
    return { ok: false, message: `must be at most ${MAX_REGEX_LENGTH} characters` };
  }
  let regex: RegExp;
  try {
    regex = new RegExp(pattern);
  } catch {
    return { ok: false, message: 'is not a valid regular expression' };
  }
  const hazard = findBacktrackingHazard(pattern);
  return hazard ? { ok: false, message: hazard } : { ok: true, regex };
}

interface GroupFrame {
  hasVariableQuantifier: boolean;
}

interface Quantifier {
  readonly min: number;
  readonly max: number;
  readonly end: number;
}

// Only called on patterns that already compiled, so the syntax is known to be well formed.
function findBacktrackingHazard(pattern: string): string | null {
  const stack: GroupFrame[] = [{ hasVariableQuantifier: false }];
  let i = 0;
  while (i < pattern.length) {
    const ch = pattern[i];
    if (ch === '(') {
      stack.push({ hasVariableQuantifier: false });
      i += groupPrefixLength(pattern, i);
      continue;
    }
    if (ch === '|') {
      i++;
      continue;
    }
    let closedGroup: GroupFrame | undefined;
    if (ch === ')') {
      closedGroup = stack.pop();
      i++;
    } else if (ch === '\\') {
      if (/[1-9]/.test(pattern[i + 1] ?? '') || pattern.startsWith('k<', i + 1)) {
        return 'must not use backreferences, which can make matching take exponential time';
      }
      i += 2;
    } else if (ch === '[') {
      i = endOfCharacterClass(pattern, i);
    } else {
      i++;
    }
    const enclosing = stack[stack.length - 1];
    if (closedGroup?.hasVariableQuantifier) enclosing.hasVariableQuantifier = true;
    const quantifier = readQuantifier(pattern, i);
    if (!quantifier) continue;
    if (closedGroup?.hasVariableQuantifier && quantifier.max > 1) {
      return 'must not nest quantifiers, as in (a+)+, which can backtrack catastrophically';
    }
    if (quantifier.min !== quantifier.max) enclosing.hasVariableQuantifier = true;
    i = quantifier.end;
    if (pattern[i] === '?') i++;
  }
  return null;
}

function groupPrefixLength(pattern: string, open: number): number {
  if (pattern[open + 1] !== '?') return 1;
  if (pattern[open + 2] !== '<') return 3;
  const lookbehind = pattern[open + 3] === '=' || pattern[open + 3] === '!';
  return lookbehind ? 4 : pattern.indexOf('>', open) - open + 1;
}

function endOfCharacterClass(pattern: string, open: number): number {
  let i = open + 1;
  while (i < pattern.length && pattern[i] !== ']') i += pattern[i] === '\\' ? 2 : 1;
  return i + 1;
}

const BRACE_QUANTIFIER = /\{(\d+)(,(\d*))?\}/y;

function readQuantifier(pattern: string, at: number): Quantifier | null {
  switch (pattern[at]) {
    case '*':
      return { min: 0, max: Infinity, end: at + 1 };
    case '+':
      return { min: 1, max: Infinity, end: at + 1 };
    case '?':
      return { min: 0, max: 1, end: at + 1 };
    case '{': {
      BRACE_QUANTIFIER.lastIndex = at;
      const match = BRACE_QUANTIFIER.exec(pattern);
      if (!match) return null;
      const min = Number(match[1]);
      const max = match[2] === undefined ? min : match[3] === '' ? Infinity : Number(match[3]);
      return { min, max, end: at + match[0].length };
    }
    default:
      return null;
  }
}
