import { parseArgs as nodeParseArgs } from 'node:util';
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

/** One-letter spellings of global options. */
const SHORT: Readonly<Record<string, string>> = { help: 'h' };

/**
 * Splits `attestly flags toggle --flag KEY --on` into words and options with Node's
 * `util.parseArgs`: `--name value`, `--name=value`, a bare `--flag` for booleans, `-h` for help.
 * `known` holds every option any command declares; whether a command accepts one is
 * `CommandOptions`'s check. Words may stand anywhere.
 */
export function parseArgs(argv: readonly string[], known: Readonly<Record<string, OptionKind>>): ParsedArgs {
  const config = Object.fromEntries(
    Object.entries(known).map(([name, type]) => [name, SHORT[name] ? { type, short: SHORT[name] } : { type }]),
  );
  let parsed: ReturnType<typeof nodeParseArgs>;
  try {
    parsed = nodeParseArgs({ args: [...argv], options: config, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError(usageProblem(error));
  }
  const options = new Map<string, string | true>();
  for (const [name, value] of Object.entries(parsed.values)) {
    if (value === true || typeof value === 'string') options.set(name, value);
  }
  return { words: parsed.positionals, options };
}

/** util.parseArgs's messages, said the way the rest of the client says them. */
function usageProblem(error: unknown): string {
  const { code, message } = error as { code?: string; message?: string };
  const option = /'(-{1,2}[^' ]+)/.exec(message ?? '')?.[1] ?? 'an option';
  if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') return `Unknown option ${option}`;
  if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') {
    return /does not take an argument/.test(message ?? '') ? `${option} takes no value` : `${option} needs a value`;
  }
  return message ?? 'Invalid command line';
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
