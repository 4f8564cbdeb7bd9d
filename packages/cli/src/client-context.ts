import { ApiClient } from './api-client.js';
import type { CommandOptions } from './client-args.js';
import { ClientError, EXIT, UsageError } from './client-errors.js';
import { credentialsPath, readCredentials, type StoredCredentials } from './credentials.js';

export const DEFAULT_BASE_URL = 'http://localhost:3000';
const SESSION_COOKIE = 'attestly.sid';

export type Env = Readonly<Record<string, string | undefined>>;

/** What the client touches outside itself, so tests can run it in-process. */
export interface ClientIo {
  readonly env: Env;
  readonly stdout: { write(text: string): unknown };
  readonly stderr: { write(text: string): unknown };
  readonly sleep: (ms: number) => Promise<void>;
  readonly openUrl: (url: string, env: Env) => boolean;
}

/** The route a command calls, named in messages. */
export interface RouteAccess {
  /** `METHOD /path` as the service names it, for messages. */
  readonly route: string;
}

/**
 * One invocation: its options, where the credentials come from, and how to authenticate a call.
 * Precedence: `--api-key` / `--base-url`, then `ATTESTLY_API_KEY` / `ATTESTLY_BASE_URL`, then the
 * file `login` wrote.
 */
export class ClientContext {
  readonly credentialsFile: string;
  private stored: StoredCredentials | null | undefined;

  constructor(
    readonly io: ClientIo,
    readonly options: CommandOptions,
  ) {
    this.credentialsFile = credentialsPath(io.env);
  }

  get json(): boolean {
    return this.options.flag('json');
  }

  /** Progress and prompts: stderr, so stdout carries only the result. */
  notice(message: string): void {
    this.io.stderr.write(`${message}\n`);
  }

  storedCredentials(): StoredCredentials | null {
    if (this.stored === undefined)
      this.stored = readCredentials(this.credentialsFile, (message) => this.notice(message));
    return this.stored;
  }

  baseUrl(): string {
    const raw =
      this.options.string('base-url') ??
      nonEmpty(this.io.env.ATTESTLY_BASE_URL) ??
      this.storedCredentials()?.baseUrl ??
      DEFAULT_BASE_URL;
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      throw new UsageError(`The base URL "${raw}" is not a URL`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      throw new UsageError(`The base URL "${raw}" must be http or https`);
    return raw.replace(/\/+$/, '');
  }

  anonymous(): ApiClient {
    return new ApiClient(this.baseUrl(), { kind: 'none' });
  }

  apiKey(): string | null {
    return (
      this.options.string('api-key') ??
      nonEmpty(this.io.env.ATTESTLY_API_KEY) ??
      this.storedCredentials()?.apiKey ??
      null
    );
  }

  /**
   * Runs `call` with the API key (`--api-key`, `ATTESTLY_API_KEY` or the one `login` stored): every
   * route the client calls takes the personal key `login` stores, acting with the user's current
   * role. Without a key, ATTESTLY_EMAIL and ATTESTLY_PASSWORD give a password session for this
   * one command.
   */
  async authenticated<T>(_access: RouteAccess, call: (api: ApiClient) => Promise<T>): Promise<T> {
    const key = this.apiKey();
    const password = this.passwordCredentials();
    if (!key && password) return this.withPasswordSession(password, call);
    if (!key) {
      throw new ClientError('Not signed in. Run `attestly login`, pass --api-key or set ATTESTLY_API_KEY.', EXIT.auth, {
        code: 'not_signed_in',
      });
    }
    return call(new ApiClient(this.baseUrl(), { kind: 'apiKey', key }));
  }

  private passwordCredentials(): { email: string; password: string } | null {
    const email = nonEmpty(this.io.env.ATTESTLY_EMAIL);
    const password = this.io.env.ATTESTLY_PASSWORD;
    return email && password ? { email, password } : null;
  }

  /** Signs in as POST /api/v1/auth/login, optionally switches organization, runs, and signs out. */
  private async withPasswordSession<T>(
    credentials: { email: string; password: string },
    call: (api: ApiClient) => Promise<T>,
  ): Promise<T> {
    const signIn = await this.anonymous().send('POST', '/api/v1/auth/login', credentials);
    const cookie = signIn.headers
      .getSetCookie()
      .map((header) => header.split(';')[0])
      .find((pair) => pair.startsWith(`${SESSION_COOKIE}=`));
    if (!cookie) throw new ClientError('The service signed in without setting a session cookie', EXIT.failed);
    const session = new ApiClient(this.baseUrl(), { kind: 'session', cookie });
    try {
      const organization = nonEmpty(this.io.env.ATTESTLY_ORG);
      if (organization) await session.call('POST', '/api/v1/auth/switch-org', { slug: organization });
      return await call(session);
    } finally {
      await session.send('POST', '/api/v1/auth/logout').catch(() => undefined);
    }
  }
}

function nonEmpty(value: string | undefined): string | undefined {
  const trimmed = value?.trim();
  return trimmed ? trimmed : undefined;
}
