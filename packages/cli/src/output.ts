/** What a command produced: the object `--json` prints, and the text a person reads. */
export interface CommandOutput {
  readonly json: unknown;
  readonly text: string;
}

export type Cell = string | number | boolean | null | undefined;

/** A plain aligned table with a header row; an empty list says so instead. */
export function table(
  headers: readonly string[],
  rows: readonly (readonly Cell[])[],
  empty = 'Nothing to show.',
): string {
  if (!rows.length) return empty;
  const cells = rows.map((row) => row.map(cellText));
  const widths = headers.map((header, column) => Math.max(header.length, ...cells.map((row) => row[column].length)));
  const line = (values: readonly string[]) =>
    values
      .map((value, column) => (column === values.length - 1 ? value : value.padEnd(widths[column])))
      .join('  ')
      .trimEnd();
  return [line(headers), ...cells.map(line)].join('\n');
}

/** `label: value` lines, aligned. */
export function details(entries: readonly (readonly [string, Cell])[]): string {
  const width = Math.max(...entries.map(([label]) => label.length));
  return entries.map(([label, value]) => `${`${label}:`.padEnd(width + 1)} ${cellText(value)}`).join('\n');
}

function cellText(value: Cell): string {
  if (value === null || value === undefined) return '-';
  if (typeof value === 'boolean') return value ? 'yes' : 'no';
  return String(value);
}
