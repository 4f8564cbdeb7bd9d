import { CliArgs } from './cli-args.js';
import { CliError, CliFailureWithOutput, needsDatabase, openCliContext, type CliContext } from './cli-context.js';
import { runMigrations } from '../database/migrate.js';
import { createApiKey, createUser, setOrganizationTier } from './identity-commands.js';
import { printJwks, rotateSigningKey, verifyAttestationCommand } from './attest-commands.js';
import { demoRootCommand, fabricateAssertionCommand, fabricateAttestationCommand } from './demo-device-commands.js';

type Command = (context: CliContext, args: CliArgs) => Promise<Record<string, unknown>>;

/** The management commands (DESIGN.md section 6); each prints one JSON object. */
const commands: Record<string, Command> = {
  migrate: async (context) => ({ applied: await runMigrations(context.databaseUrl) }),
  'user:create': createUser,
  'org:set-tier': setOrganizationTier,
  'apikey:create': createApiKey,
  'attest:verify': verifyAttestationCommand,
  'attest:demo-root': demoRootCommand,
  'attest:fabricate': fabricateAttestationCommand,
  'attest:assert': fabricateAssertionCommand,
  jwks: printJwks,
  'jwt:rotate': rotateSigningKey,
};

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  const command = name ? commands[name] : undefined;
  if (!command) {
    process.stderr.write(`Usage: npm run cli -- <command> [options]\nCommands: ${Object.keys(commands).join(', ')}\n`);
    return name ? 2 : 0;
  }
  let context: CliContext | null = null;
  try {
    const args = CliArgs.parse(rest);
    context = await openCliContext({ database: needsDatabase(command) });
    process.stdout.write(`${JSON.stringify(await command(context, args))}\n`);
    return 0;
  } catch (error) {
    if (error instanceof CliFailureWithOutput) process.stdout.write(`${JSON.stringify(error.output)}\n`);
    process.stderr.write(
      `${name}: ${error instanceof CliError || error instanceof Error ? error.message : String(error)}\n`,
    );
    return 1;
  } finally {
    await context?.close();
  }
}

process.exitCode = await main(process.argv.slice(2));
