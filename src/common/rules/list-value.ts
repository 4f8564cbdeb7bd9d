/**
 * How an `in_list` value is split. Flag rules read `\,` as a literal comma and `\\` as a backslash,
 * so model identifiers such as `iPhone14,2` can be listed (`escaped`); claim conditions split on
 * every comma, a backslash being an ordinary character (`plain`).
 */
export type ListSyntax = 'escaped' | 'plain';

/** Items of an `in_list` value: comma-separated, trimmed, empty items dropped. */
export function parseListValue(value: string, syntax: ListSyntax = 'escaped'): string[] {
  const items: string[] = [];
  let current = '';
  for (let i = 0; i < value.length; i++) {
    const ch = value[i];
    if (syntax === 'escaped' && ch === '\\' && (value[i + 1] === ',' || value[i + 1] === '\\')) {
      current += value[++i];
    } else if (ch === ',') {
      items.push(current);
      current = '';
    } else {
      current += ch;
    }
  }
  items.push(current);
  return items.map((item) => item.trim()).filter((item) => item !== '');
}
