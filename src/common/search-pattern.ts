/**
 * An ILIKE pattern matching `search` anywhere, with its own `%`, `_` and `\` taken literally
 * (use with `ESCAPE '\'`).
 */
export function containsPattern(search: string): string {
  return `%${search.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}
