import { UsageError } from './client-errors.js';

export type OptionKind = 'string' | 'boolean';

/** Options every command accepts. */
export const GLOBAL_OPTIONS: Readonly<Record<string, OptionKind>> = {
  json: 'boolean',
  'api-key': 'string',
  'base-url': 'string',
  help: 'boolean',
};

/** The words of a command line before its first option, and its options. */
export interface ParsedArgs {
  readonly words: readonly string[];
  readonly options: ReadonlyMap<string, string | true>;
}

/**
 * Splits `attestly flags toggle --flag ID --on` into words and options: `--name value`,
 * `--name=value`, or a bare `--flag` for the names in `booleans`. Words may stand anywhere.
 */
export function parseArgs(argv: readonly string[], booleans: ReadonlySet<string>): ParsedArgs {
  const words: string[] = [];
  const options = new Map<string, string | true>();
  for (let i = 0; i < argv.length; i++) {
    const token = argv[i];
    if (!token.startsWith('--') || token === '--') {
      words.push(token);
      continue;
    }
    const [name, inline] = token.slice(2).split(/=(.*)/s, 2);
    const next = argv[i + 1];
    if (inline !== undefined) options.set(name, inline);
    else if (booleans.has(name) || next === undefined || next.startsWith('--')) options.set(name, true);
    else options.set(name, argv[++i]);
  }
  return { words, options };
}

/** The options of one command, checked against what it declares. */
export class CommandOptions {
  constructor(
    private readonly values: ReadonlyMap<string, string | true>,
    private readonly declared: Readonly<Record<string, OptionKind>>,
  ) {
    for (const [name, value] of values) {
      const kind = declared[name] ?? GLOBAL_OPTIONS[name];
      if (!kind) throw new UsageError(`Unknown option --${name}`);
      if (kind === 'boolean' && value !== true) {
        throw new UsageError(`--${name} takes no value`);
      }
    }
  }

  string(name: string): string | undefined {
    const value = this.values.get(name);
    if (value === true) throw new UsageError(`--${name} needs a value`);
    return value;
  }

  required(name: string): string {
    const value = this.string(name);
    if (value === undefined || value === '') throw new UsageError(`--${name} is required`);
    return value;
  }

  flag(name: string): boolean {
    return this.values.get(name) === true;
  }
}
