import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseEnv } from 'node:util';
import { ConfigError } from './app-config.js';

/** Where the service and the CLI look for a `.env` file: the directory they run in, as Nest's ConfigModule does. */
export const ENV_FILE = '.env';

/**
 * Reads `.env` (Node's own parser, the syntax of `node --env-file`) into `env` before the
 * configuration is loaded: a variable already set in the real environment wins over the file. A
 * missing file is no error; an unreadable one is, as a ConfigError (one line). Returns the path
 * read, or null when there was none.
 */
export function loadEnvFile(path: string = resolve(ENV_FILE), env: Record<string, string | undefined> = process.env) {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new ConfigError(ENV_FILE, `(${path}) cannot be read: ${(error as Error).message}`);
  }
  for (const [name, value] of Object.entries(parseEnv(text))) {
    if (env[name] === undefined) env[name] = value;
  }
  return path;
}
