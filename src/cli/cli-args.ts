import { CliError } from './cli-context.js';

/** `--name value` and `--flag` options of one command. */
export class CliArgs {
  private constructor(private readonly values: ReadonlyMap<string, string | true>) {}

  static parse(argv: readonly string[]): CliArgs {
    const values = new Map<string, string | true>();
    for (let i = 0; i < argv.length; i++) {
      const token = argv[i];
      if (!token.startsWith('--')) throw new CliError(`Unexpected argument "${token}"`);
      const [name, inline] = token.slice(2).split(/=(.*)/s, 2);
      const next = argv[i + 1];
      if (inline !== undefined) values.set(name, inline);
      else if (next !== undefined && !next.startsWith('--')) values.set(name, argv[++i]);
      else values.set(name, true);
    }
    return new CliArgs(values);
  }

  required(name: string): string {
    const value = this.values.get(name);
    if (typeof value !== 'string' || value === '') throw new CliError(`--${name} is required`);
    return value;
  }

  optional(name: string): string | undefined {
    const value = this.values.get(name);
    if (value === true) throw new CliError(`--${name} needs a value`);
    return value;
  }

  flag(name: string): boolean {
    return this.values.get(name) === true;
  }
}
