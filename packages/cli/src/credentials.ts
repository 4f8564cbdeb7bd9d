import { chmodSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join } from 'node:path';
import { ClientError, EXIT } from './client-errors.js';

/** What `login` stores: the key is a secret, so the file is readable by its owner only. */
export interface StoredCredentials {
  readonly baseUrl: string;
  readonly apiKey: string;
  readonly email: string | null;
}

type Env = Readonly<Record<string, string | undefined>>;

/** `$XDG_CONFIG_HOME/attestly/credentials.json`, else `~/.config/attestly/credentials.json` (`%APPDATA%` on Windows). */
export function credentialsPath(env: Env): string {
  const xdg = env.XDG_CONFIG_HOME;
  // The XDG specification says a relative value is invalid and must be ignored.
  const configHome =
    xdg && isAbsolute(xdg)
      ? xdg
      : process.platform === 'win32' && env.APPDATA
        ? env.APPDATA
        : join(env.HOME || homedir(), '.config');
  return join(configHome, 'attestly', 'credentials.json');
}

export function readCredentials(path: string, warn: (message: string) => void): StoredCredentials | null {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new ClientError(`Cannot read ${path}: ${(error as Error).message}`, EXIT.failed);
  }
  if (process.platform !== 'win32' && (statSync(path).mode & 0o077) !== 0) {
    warn(`Warning: ${path} is readable by other users; run chmod 600 on it.`);
  }
  try {
    const parsed = JSON.parse(text) as Partial<StoredCredentials>;
    if (typeof parsed.baseUrl === 'string' && typeof parsed.apiKey === 'string') {
      return {
        baseUrl: parsed.baseUrl,
        apiKey: parsed.apiKey,
        email: typeof parsed.email === 'string' ? parsed.email : null,
      };
    }
  } catch {
    // reported below
  }
  throw new ClientError(
    `${path} is not a credentials file written by attestly login; delete it and sign in again`,
    EXIT.failed,
  );
}

/**
 * Writes the file with mode 0600 in a directory of mode 0700, through a temporary file renamed
 * into place, so a reader never sees half a file and the key is never readable by others.
 */
export function writeCredentials(path: string, credentials: StoredCredentials): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const temporary = `${path}.${process.pid}.tmp`;
  try {
    writeFileSync(temporary, `${JSON.stringify(credentials, null, 2)}\n`, { mode: 0o600 });
    // The mode given at creation is narrowed by the umask, never widened; this makes it exact.
    chmodSync(temporary, 0o600);
    renameSync(temporary, path);
  } catch (error) {
    rmSync(temporary, { force: true });
    throw new ClientError(`Cannot write ${path}: ${(error as Error).message}`, EXIT.failed);
  }
}

export function removeCredentials(path: string): boolean {
  try {
    rmSync(path);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw new ClientError(`Cannot remove ${path}: ${(error as Error).message}`, EXIT.failed);
  }
}
