import { CliArgs, type OptionKind } from './cli-args.js';
import { CliError, CliFailureWithOutput, CliUsageError } from './cli-errors.js';
import type { CliContext } from './cli-context.js';

type Run = (context: CliContext, args: CliArgs) => Promise<Record<string, unknown>>;

// Each command's code is loaded when it runs, so a usage error or --help answers at once, without
// the service's modules.
const identity = () => import('./identity-commands.js');
const attest = () => import('./attest-commands.js');
const demo = () => import('./demo-device-commands.js');

interface Command {
  readonly run: () => Promise<Run>;
  /** Every option the command takes; any other is refused. */
  readonly options: Readonly<Record<string, OptionKind>>;
  /** The options as the usage line shows them. */
  readonly usage: string;
  readonly summary: string;
}

const PROGRAM = 'npm run cli --';

/** The management commands (DESIGN.md section 6); each prints one JSON object. */
const commands: Record<string, Command> = {
  migrate: {
    run: async () => {
      const { runMigrations } = await import('../database/migrate.js');
      return async (context) => ({ applied: await runMigrations(context.databaseUrl) });
    },
    options: {},
    usage: '',
    summary: 'Applies pending migrations (the server also does at start).',
  },
  'user:create': {
    run: async () => (await identity()).createUser,
    options: { email: 'string', password: 'string', 'org-name': 'string', tier: 'string', 'super-admin': 'boolean' },
    usage: '--email EMAIL --password PASSWORD [--org-name NAME] [--tier TIER] [--super-admin]',
    summary: 'An active, verified user; with --org-name the Owner of a new organization of TIER (default free).',
  },
  'org:set-tier': {
    run: async () => (await identity()).setOrganizationTier,
    options: { org: 'string', tier: 'string' },
    usage: '--org SLUG --tier TIER',
    summary: "Changes an organization's plan.",
  },
  'apikey:create': {
    run: async () => (await identity()).createApiKey,
    options: { org: 'string', scopes: 'string', type: 'string', user: 'string', name: 'string' },
    usage: '--org SLUG --scopes a,b [--type gpat|aat|service] [--user EMAIL] [--name NAME]',
    summary: 'Prints a new API key (shown once), its id and prefix; a gpat key acts as --user.',
  },
  'attest:verify': {
    run: async () => (await attest()).verifyAttestationCommand,
    options: {
      attestation: 'string',
      'key-id': 'string',
      challenge: 'string',
      'client-data-hash': 'string',
      'team-id': 'string',
      'bundle-id': 'string',
      at: 'string',
      'root-ca': 'string',
    },
    usage:
      '--attestation B64 --key-id B64 (--challenge TEXT | --client-data-hash B64) --team-id T --bundle-id B [--at ISO] [--root-ca PEM]',
    summary: 'Verifies an App Attest attestation offline (no database needed).',
  },
  'attest:demo-root': {
    run: async () => (await demo()).demoRootCommand,
    options: {},
    usage: '',
    summary: 'Creates (once) the made-up App Attest authority in DATA_DIR and prints its root certificate path.',
  },
  'attest:fabricate': {
    run: async () => (await demo()).fabricateAttestationCommand,
    options: { challenge: 'string', 'team-id': 'string', 'bundle-id': 'string', environment: 'string' },
    usage: '--challenge TEXT --team-id T --bundle-id B [--environment production|development]',
    summary: "A fabricated attestation for a challenge, by the demo authority's new device (development only).",
  },
  'attest:assert': {
    run: async () => (await demo()).fabricateAssertionCommand,
    options: {
      'key-file': 'string',
      challenge: 'string',
      counter: 'string',
      'team-id': 'string',
      'bundle-id': 'string',
    },
    usage: '--key-file PEM --challenge TEXT --counter N --team-id T --bundle-id B',
    summary: "An assertion by a fabricated device's key, for POST /api/v1/attestation/refresh (development only).",
  },
  'attest:android-app': {
    run: async () => (await demo()).androidAppCommand,
    options: { package: 'string' },
    usage: '--package com.example.app',
    summary:
      "Creates (once) a made-up Android app's Play Integrity keys in DATA_DIR and prints its Android settings (development only).",
  },
  'attest:android-token': {
    run: async () => (await demo()).androidTokenCommand,
    options: {
      package: 'string',
      challenge: 'string',
      verdict: 'string',
      'app-verdict': 'string',
      licensing: 'string',
    },
    usage:
      '--package P --challenge TEXT [--verdict MEETS_DEVICE_INTEGRITY,...|none] [--app-verdict PLAY_RECOGNIZED|UNRECOGNIZED_VERSION|UNEVALUATED] [--licensing LICENSED|UNLICENSED|UNEVALUATED]',
    summary: "A fabricated Play Integrity token for a challenge, by the demo Android app's keys (development only).",
  },
  jwks: {
    run: async () => (await attest()).printJwks,
    options: {},
    usage: '',
    summary: 'Prints the published signing keys (the JWKS).',
  },
  'jwt:rotate': {
    run: async () => (await attest()).rotateSigningKey,
    options: {},
    usage: '',
    summary: 'Makes a new signing key current; the old one stays published.',
  },
};

function usageLine(name: string, command: Command): string {
  return `Usage: ${PROGRAM} ${name}${command.usage ? ` ${command.usage}` : ''} [-h]`;
}

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  const command = name ? commands[name] : undefined;
  if (!command) {
    const help = !name || name === '--help' || name === '-h';
    (help ? process.stdout : process.stderr).write(
      `Usage: ${PROGRAM} <command> [options]   (${PROGRAM} <command> --help for its options)\nCommands: ${Object.keys(commands).join(', ')}\n`,
    );
    return help ? 0 : 2;
  }
  let context: CliContext | null = null;
  try {
    const args = CliArgs.parse(rest, command.options);
    if (args.help) {
      process.stdout.write(`${usageLine(name, command)}\n${command.summary}\n`);
      return 0;
    }
    const run = await command.run();
    const { needsDatabase, openCliContext } = await import('./cli-context.js');
    context = await openCliContext({ database: needsDatabase(run) });
    process.stdout.write(`${JSON.stringify(await run(context, args))}\n`);
    return 0;
  } catch (error) {
    if (error instanceof CliFailureWithOutput) process.stdout.write(`${JSON.stringify(error.output)}\n`);
    process.stderr.write(
      `${name}: ${error instanceof CliError || error instanceof Error ? error.message : String(error)}\n`,
    );
    if (error instanceof CliUsageError) {
      process.stderr.write(`${usageLine(name, command)}\n`);
      return 2;
    }
    return 1;
  } finally {
    await context?.close();
  }
}

process.exitCode = await main(process.argv.slice(2));
