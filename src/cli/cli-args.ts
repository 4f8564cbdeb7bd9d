import { parseArgs } from 'node:util';
import { CliError, CliUsageError } from './cli-errors.js';

export type OptionKind = 'string' | 'boolean';

/**
 * The options of one command, parsed by `node:util` `parseArgs` against what the command declares:
 * `--name value`, `--name=value`, a bare `--flag`; `-h`/`--help` everywhere. An unknown option,
 * a positional word or a missing value is a usage error.
 */
export class CliArgs {
  private constructor(
    private readonly values: ReadonlyMap<string, string | boolean>,
    readonly help: boolean,
  ) {}

  static parse(argv: readonly string[], options: Readonly<Record<string, OptionKind>>): CliArgs {
    let parsed: ReturnType<typeof parseArgs>;
    try {
      parsed = parseArgs({
        args: [...argv],
        options: {
          ...Object.fromEntries(Object.entries(options).map(([name, type]) => [name, { type }])),
          help: { type: 'boolean', short: 'h' },
        },
        strict: true,
        allowPositionals: false,
      });
    } catch (error) {
      throw new CliUsageError(usageProblem(error));
    }
    const values = new Map<string, string | boolean>();
    for (const [name, value] of Object.entries(parsed.values)) {
      if (typeof value === 'string' || typeof value === 'boolean') values.set(name, value);
    }
    return new CliArgs(values, values.get('help') === true);
  }

  required(name: string): string {
    const value = this.values.get(name);
    // A command's own check, after the command line parsed: one line, exit 1, as its other checks.
    if (typeof value !== 'string' || value === '') throw new CliError(`--${name} is required`);
    return value;
  }

  optional(name: string): string | undefined {
    const value = this.values.get(name);
    return typeof value === 'string' ? value : undefined;
  }

  flag(name: string): boolean {
    return this.values.get(name) === true;
  }
}

/** parseArgs's messages, said in one short line naming the option. */
function usageProblem(error: unknown): string {
  const { code, message } = error as { code?: string; message?: string };
  if (code === 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL') {
    const word = /'([^']*)'/.exec(message ?? '')?.[1] ?? '';
    return `Unexpected argument "${word}"`;
  }
  const option = /'(-{1,2}[^' ]+)/.exec(message ?? '')?.[1] ?? 'an option';
  if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') return `Unknown option ${option}`;
  if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') {
    return /does not take an argument/.test(message ?? '') ? `${option} takes no value` : `${option} needs a value`;
  }
  return message ?? 'Invalid command line';
}
