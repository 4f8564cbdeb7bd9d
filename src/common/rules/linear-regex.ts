import { RE2JS } from 're2js';

/**
 * The one regular-expression engine for tenant-written patterns (flag rules, claim conditions and
 * claim validation): RE2 semantics through `re2js`, which matches in time linear in the input
 * whatever the pattern, so no pattern can stall the event loop for other tenants and no timeout is
 * needed. RE2 has no backreferences or lookaround; a pattern using them is refused with a message
 * the caller puts on the offending field.
 */
export const MAX_REGEX_LENGTH = 256;

export interface LinearRegex {
  /** Whether the pattern matches anywhere in `subject` (as `RegExp.prototype.test`). */
  test(subject: string): boolean;
  readonly source: string;
}

export type LinearRegexResult =
  { readonly ok: true; readonly regex: LinearRegex } | { readonly ok: false; readonly message: string };

export function compileLinearRegex(pattern: string): LinearRegexResult {
  if (pattern.length === 0) return { ok: false, message: 'must not be an empty pattern' };
  if (pattern.length > MAX_REGEX_LENGTH) {
    return { ok: false, message: `must be a pattern of at most ${MAX_REGEX_LENGTH} characters` };
  }
  let compiled: RE2JS;
  try {
    compiled = RE2JS.compile(pattern);
  } catch (error) {
    const reason = (error as Error).message.replace(/^error parsing regexp: /, '');
    return {
      ok: false,
      message: `must be a regular expression RE2 accepts (no backreferences or lookaround): ${reason}`,
    };
  }
  return { ok: true, regex: { source: pattern, test: (subject) => compiled.test(subject) } };
}
