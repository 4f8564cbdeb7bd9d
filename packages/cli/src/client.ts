import { readFileSync } from 'node:fs';
import { setTimeout as delay } from 'node:timers/promises';
import { CommandOptions, GLOBAL_OPTIONS, parseArgs, type OptionKind } from './client-args.js';
import { ClientContext, type ClientIo } from './client-context.js';
import { ClientError, EXIT, UsageError, type ExitCode } from './client-errors.js';
import { COMMANDS, type Command } from './commands.js';
import { openBrowser } from './open-browser.js';

/** Every option any command declares, with its one kind (a name never means two things). */
export const ALL_OPTIONS: Readonly<Record<string, OptionKind>> = (() => {
  const all: Record<string, OptionKind> = { ...GLOBAL_OPTIONS };
  for (const command of COMMANDS) {
    for (const [name, kind] of Object.entries(command.options)) {
      if (all[name] && all[name] !== kind) throw new Error(`option --${name} is declared as ${all[name]} and ${kind}`);
      all[name] = kind;
    }
  }
  return all;
})();

/** This package's version, from its own package.json (next to dist/ and src/). */
export function clientVersion(): string {
  const manifest = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
    version?: string;
  };
  return manifest.version ?? 'unknown';
}

export function processIo(): ClientIo {
  return {
    env: process.env,
    stdout: process.stdout,
    stderr: process.stderr,
    sleep: (ms) => delay(ms),
    openUrl: openBrowser,
  };
}

/** Runs one command line of `attestly`; resolves to the exit code, never rejects. */
export async function runClient(argv: readonly string[], io: ClientIo = processIo()): Promise<ExitCode> {
  let json = argv.includes('--json');
  try {
    // `--version` alone (release-notes create has a --version option of its own).
    if (argv.length === 1 && ['--version', '-v', '-V'].includes(argv[0])) {
      io.stdout.write(`attestly ${clientVersion()}\n`);
      return EXIT.ok;
    }
    const { words, options } = parseArgs(argv, ALL_OPTIONS);
    json = options.get('json') === true;
    const help = options.get('help') === true;
    if (!words.length) {
      io.stdout.write(helpText());
      return EXIT.ok;
    }
    if (words[0] === 'help') {
      io.stdout.write(words.length === 1 ? helpText() : helpFor(words.slice(1)));
      return EXIT.ok;
    }
    const command = COMMANDS.find((candidate) => sameWords(candidate.words, words));
    if (!command) {
      const group = COMMANDS.filter((candidate) => candidate.words[0] === words[0]);
      if (help && group.length && words.length === 1) {
        io.stdout.write(groupHelp(words[0], group));
        return EXIT.ok;
      }
      throw new UsageError(
        group.length
          ? `Unknown command "${words.join(' ')}". Try: ${group.map((candidate) => `attestly ${candidate.usage}`).join('; ')}`
          : `Unknown command "${words.join(' ')}". Run attestly --help for the list.`,
      );
    }
    if (help) {
      io.stdout.write(commandHelp(command));
      return EXIT.ok;
    }
    const context = new ClientContext(io, new CommandOptions(options, command.options));
    const output = await command.run(context);
    io.stdout.write(json ? `${JSON.stringify(output.json, null, 2)}\n` : `${output.text}\n`);
    return EXIT.ok;
  } catch (error) {
    return report(error, json, io);
  }
}

function sameWords(expected: readonly string[], actual: readonly string[]): boolean {
  return expected.length === actual.length && expected.every((word, index) => word === actual[index]);
}

/** One clear message on stderr (a JSON object with `--json`), and the exit code for its kind. */
function report(error: unknown, json: boolean, io: ClientIo): ExitCode {
  if (!(error instanceof ClientError)) {
    const message = error instanceof Error ? error.message : String(error);
    io.stderr.write(json ? `${JSON.stringify({ error: message, code: 'client_error' })}\n` : `Error: ${message}\n`);
    return EXIT.failed;
  }
  if (json) {
    io.stderr.write(`${JSON.stringify({ error: error.message, ...error.details })}\n`);
    return error.exitCode;
  }
  const lines = [`Error: ${error.message}`];
  const { status, code, hint, requestId, fields } = error.details as {
    status?: number;
    code?: string;
    hint?: string;
    requestId?: string;
    fields?: { field: string; message: string }[];
  };
  if (status !== undefined) lines[0] += ` (HTTP ${status}${code ? `, ${code}` : ''})`;
  for (const field of fields ?? []) lines.push(`  ${field.field}: ${field.message}`);
  if (hint) lines.push(`Hint: ${hint}`);
  if (requestId) lines.push(`Request ID: ${requestId}`);
  if (error instanceof UsageError) lines.push('Run attestly --help for usage.');
  io.stderr.write(`${lines.join('\n')}\n`);
  return error.exitCode;
}

/** `attestly help flags` and `attestly help flags list`. */
function helpFor(words: readonly string[]): string {
  const command = COMMANDS.find((candidate) => sameWords(candidate.words, words));
  if (command) return commandHelp(command);
  const group = COMMANDS.filter((candidate) => candidate.words[0] === words[0]);
  if (group.length && words.length === 1) return groupHelp(words[0], group);
  throw new UsageError(`No help for "${words.join(' ')}": there is no such command. Run attestly --help for the list.`);
}

function commandHelp(command: Command): string {
  return `Usage: attestly ${command.usage}

${command.summary}
${command.details ? `\n${command.details}\n` : ''}
${GLOBAL_HELP}`;
}

function groupHelp(group: string, commands: readonly Command[]): string {
  return `Commands of attestly ${group}:
${commands.map((command) => `  attestly ${command.usage}\n      ${command.summary}`).join('\n')}

Run attestly ${group} <command> --help for one command.
`;
}

const GLOBAL_HELP = `Options for every command:
  --json             print the result as JSON on stdout (errors as JSON on stderr)
  --api-key KEY      API key to use (else ATTESTLY_API_KEY, else the one login stored)
  --base-url URL     service URL (else ATTESTLY_BASE_URL, else the stored one, else http://localhost:3000)
  -h, --help         show help for the command
`;

function helpText(): string {
  return `Usage: attestly <command> [options]

Commands:
${COMMANDS.map((command) => `  ${command.usage}\n      ${command.summary}`).join('\n')}

${GLOBAL_HELP}  -v, --version      print the client's version

Every command works with the key \`attestly login\` stores (it acts with your current role).
Without a key, ATTESTLY_EMAIL and ATTESTLY_PASSWORD sign in with a password for one command
(ATTESTLY_ORG picks the organization by slug). BROWSER=none keeps login from opening a browser.

Exit codes: 0 ok, 1 request failed, 2 usage error, 3 not signed in or not allowed, 4 login not completed.
`;
}
