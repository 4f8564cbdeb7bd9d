import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { runClient } from '../src/client.js';
import type { ClientIo, Env } from '../src/client-context.js';
import { credentialsPath } from '../src/credentials.js';
import { openBrowser } from '../src/open-browser.js';

/** One request the stub service received. */
interface Received {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: unknown;
}

type Reply = { status: number; body?: unknown; headers?: Record<string, string | string[]> };
type Handler = (request: Received) => Reply;

/** A stand-in for the service: answers from a queue of handlers per `METHOD /path`, records every request. */
class StubService {
  readonly received: Received[] = [];
  private readonly routes = new Map<string, Handler[]>();
  private server!: Server;
  baseUrl = '';

  async start(): Promise<void> {
    this.server = createServer((request, response) => {
      let raw = '';
      request.on('data', (chunk: Buffer) => (raw += chunk.toString()));
      request.on('end', () => {
        const received = {
          method: request.method!,
          path: request.url!,
          headers: request.headers,
          body: raw ? (JSON.parse(raw) as unknown) : undefined,
        };
        this.received.push(received);
        const queue = this.routes.get(`${received.method} ${received.path}`);
        const handler = queue && (queue.length > 1 ? queue.shift()! : queue[0]);
        const reply = handler ? handler(received) : { status: 404, body: { error: 'No route', code: 'not_found' } };
        response.writeHead(reply.status, { 'Content-Type': 'application/json', ...reply.headers });
        response.end(reply.body === undefined ? '' : JSON.stringify(reply.body));
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    const address = this.server.address();
    this.baseUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  }

  stop(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  reset(): void {
    this.received.length = 0;
    this.routes.clear();
  }

  /** Answers `METHOD /path` with each reply in turn, repeating the last. */
  on(route: string, ...replies: (Reply | Handler)[]): void {
    this.routes.set(
      route,
      replies.map((reply) => (typeof reply === 'function' ? reply : () => reply)),
    );
  }
}

interface Run {
  code: number;
  stdout: string;
  stderr: string;
  sleeps: number[];
  opened: string[];
}

const KEY = 'gpat_test_key_0123456789';
const APP_ID = '0b8f9c52-7a83-4a2b-9d39-3c1f0e6f1a11';
const FLAG_ID = '5d1f6b7e-2c4a-4f7d-8a3b-9e0c1d2f3a4b';
const NOTE_ID = '9a7e5c3b-1d2f-4e6a-8b0c-2d4f6a8c0e1a';

describe('command-line client (runClient against a stub service)', () => {
  const stub = new StubService();
  let configHome: string;

  beforeAll(async () => {
    await stub.start();
  });
  afterAll(async () => {
    await stub.stop();
  });
  beforeEach(() => {
    stub.reset();
    configHome = mkdtempSync(join(tmpdir(), 'attestly-client-'));
  });

  async function run(argv: string[], env: Env = {}): Promise<Run> {
    let stdout = '';
    let stderr = '';
    const sleeps: number[] = [];
    const opened: string[] = [];
    const io: ClientIo = {
      env: { XDG_CONFIG_HOME: configHome, ATTESTLY_BASE_URL: stub.baseUrl, ...env },
      stdout: { write: (text: string) => (stdout += text) },
      stderr: { write: (text: string) => (stderr += text) },
      sleep: (ms) => {
        sleeps.push(ms);
        return Promise.resolve();
      },
      openUrl: (url) => {
        opened.push(url);
        return true;
      },
    };
    const code = await runClient(argv, io);
    return { code, stdout, stderr, sleeps, opened };
  }

  function storedFile(): string {
    return join(configHome, 'attestly', 'credentials.json');
  }

  describe('login', () => {
    const session = {
      session_id: 'c0ffee00-0000-4000-8000-000000000001',
      verification_url: 'http://service.example/device?session_id=c0ffee00-0000-4000-8000-000000000001',
      expires_in: 600,
    };
    const pollRoute = `GET /api/v1/auth/cli/sessions/${session.session_id}`;
    const pending = { status: 200, body: { status: 'pending', api_key: null, email: null } };

    it('opens the URL, polls with growing delays and stores the key with mode 0600', async () => {
      stub.on('POST /api/v1/auth/cli/sessions', { status: 201, body: session });
      stub.on(
        pollRoute,
        pending,
        { status: 429, body: { error: 'Rate limit exceeded', code: 'rate_limited' } },
        pending,
        { status: 200, body: { status: 'active', api_key: KEY, email: 'dev@example.com' } },
      );
      const result = await run(['login']);
      expect(result).toMatchObject({ code: 0, opened: [session.verification_url] });
      expect(result.stderr).toContain(session.verification_url);
      expect(result.sleeps).toEqual([1000, 1500, 5000, 5000]);
      expect(result.stdout).toContain('Signed in to');
      expect(result.stdout).toContain('dev@example.com');
      expect(result.stdout).not.toContain(KEY);
      expect(JSON.parse(readFileSync(storedFile(), 'utf8'))).toEqual({
        baseUrl: stub.baseUrl,
        apiKey: KEY,
        email: 'dev@example.com',
      });
      expect(statSync(storedFile()).mode & 0o777).toBe(0o600);
      expect(statSync(join(configHome, 'attestly')).mode & 0o777).toBe(0o700);
    });

    it('does not open a browser with --no-browser, and prints JSON with --json', async () => {
      stub.on('POST /api/v1/auth/cli/sessions', { status: 201, body: session });
      stub.on(pollRoute, { status: 200, body: { status: 'active', api_key: KEY, email: 'dev@example.com' } });
      const result = await run(['login', '--no-browser', '--json']);
      expect(result.code).toBe(0);
      expect(result.opened).toEqual([]);
      expect(JSON.parse(result.stdout)).toEqual({
        baseUrl: stub.baseUrl,
        email: 'dev@example.com',
        credentialsFile: storedFile(),
      });
    });

    it.each([
      [{ status: 'expired', api_key: null, email: null }, /denied or has expired/],
      [{ status: 'active', api_key: null, email: 'dev@example.com' }, /already collected/],
    ])('exits 4 without storing anything when the poll says %j', async (answer, message) => {
      stub.on('POST /api/v1/auth/cli/sessions', { status: 201, body: session });
      stub.on(pollRoute, pending, { status: 200, body: answer });
      const result = await run(['login']);
      expect(result.code).toBe(4);
      expect(result.stderr).toMatch(message);
      expect(() => statSync(storedFile())).toThrow();
    });

    it('replaces an earlier credentials file, and logout removes it', async () => {
      writeFileSync(join(configHome, 'placeholder'), '');
      stub.on('POST /api/v1/auth/cli/sessions', { status: 201, body: session });
      stub.on(pollRoute, { status: 200, body: { status: 'active', api_key: 'gpat_first', email: 'a@example.com' } });
      expect((await run(['login'])).code).toBe(0);
      stub.on(pollRoute, { status: 200, body: { status: 'active', api_key: 'gpat_second', email: 'b@example.com' } });
      expect((await run(['login'])).code).toBe(0);
      expect(JSON.parse(readFileSync(storedFile(), 'utf8'))).toMatchObject({ apiKey: 'gpat_second' });
      const out = await run(['logout']);
      expect(out.code).toBe(0);
      expect(() => statSync(storedFile())).toThrow();
      expect((await run(['logout'])).stdout).toContain('No stored credentials');
    });
  });

  describe('credentials', () => {
    it('prefers --api-key to ATTESTLY_API_KEY to the stored key, and uses the stored base URL', async () => {
      stub.on('GET /api/v1/auth/me', (request) => ({
        status: 200,
        body: { email: 'dev@example.com', apiKeyPrefix: String(request.headers.authorization).slice(7, 14) },
      }));
      const file = storedFile();
      await run(['logout']);
      const { mkdirSync } = await import('node:fs');
      mkdirSync(join(configHome, 'attestly'), { recursive: true });
      writeFileSync(file, JSON.stringify({ baseUrl: stub.baseUrl, apiKey: 'gpat_stored', email: null }), {
        mode: 0o600,
      });

      const stored = await run(['whoami', '--json'], { ATTESTLY_BASE_URL: '' });
      expect(JSON.parse(stored.stdout)).toEqual({
        baseUrl: stub.baseUrl,
        email: 'dev@example.com',
        apiKeyPrefix: 'gpat_st',
      });
      const fromEnv = await run(['whoami', '--json'], { ATTESTLY_API_KEY: 'gpat_envkey' });
      expect(JSON.parse(fromEnv.stdout).apiKeyPrefix).toBe('gpat_en');
      const fromFlag = await run(['whoami', '--json', '--api-key', 'gpat_flagkey'], {
        ATTESTLY_API_KEY: 'gpat_envkey',
      });
      expect(JSON.parse(fromFlag.stdout).apiKeyPrefix).toBe('gpat_fl');
    });

    it('warns when the stored file is readable by others', async () => {
      const { mkdirSync } = await import('node:fs');
      mkdirSync(join(configHome, 'attestly'), { recursive: true });
      writeFileSync(storedFile(), JSON.stringify({ baseUrl: stub.baseUrl, apiKey: KEY, email: null }), { mode: 0o644 });
      stub.on('GET /api/v1/auth/me', { status: 200, body: { email: null, apiKeyPrefix: 'gpat_x' } });
      const result = await run(['whoami']);
      expect(result.code).toBe(0);
      expect(result.stderr).toMatch(/readable by other users/);
    });

    it('says how to sign in when there is no key at all (exit 3)', async () => {
      const result = await run(['usage']);
      expect(result.code).toBe(3);
      expect(result.stderr).toMatch(/Not signed in\. Run `attestly login`/);
      expect(stub.received).toEqual([]);
    });

    it('places the file under XDG_CONFIG_HOME when absolute, else ~/.config', () => {
      expect(credentialsPath({ XDG_CONFIG_HOME: '/x/config', HOME: '/home/u' })).toBe(
        '/x/config/attestly/credentials.json',
      );
      expect(credentialsPath({ XDG_CONFIG_HOME: 'relative', HOME: '/home/u' })).toBe(
        '/home/u/.config/attestly/credentials.json',
      );
      expect(credentialsPath({ HOME: '/home/u' })).toBe('/home/u/.config/attestly/credentials.json');
    });
  });

  describe('release notes', () => {
    const note = {
      id: NOTE_ID,
      appId: APP_ID,
      version: '2.1.0',
      title: 'Faster sync',
      body: 'Sync is twice as fast.',
      isPublished: false,
      publishedAt: null,
    };

    it('creates a note with the API key', async () => {
      stub.on('POST /api/v1/org/release-notes', { status: 201, body: note });
      const result = await run(
        [
          'release-notes',
          'create',
          '--app',
          APP_ID,
          '--version',
          '2.1.0',
          '--title',
          'Faster sync',
          '--body',
          'Sync is twice as fast.',
        ],
        { ATTESTLY_API_KEY: KEY },
      );
      expect(result.code).toBe(0);
      expect(stub.received).toHaveLength(1);
      expect(stub.received[0]).toMatchObject({
        method: 'POST',
        path: '/api/v1/org/release-notes',
        body: { appId: APP_ID, version: '2.1.0', title: 'Faster sync', body: 'Sync is twice as fast.' },
      });
      expect(stub.received[0].headers.authorization).toBe(`Bearer ${KEY}`);
      expect(result.stdout).toContain(`Created release note ${NOTE_ID}`);
      expect(result.stdout).toMatch(/Version:\s+2\.1\.0/);
    });

    it('reads the body from --body-file and can publish at once', async () => {
      const bodyFile = join(configHome, 'notes.md');
      writeFileSync(bodyFile, '# 2.1.0\n\n- Faster sync\n');
      stub.on('POST /api/v1/org/release-notes', { status: 201, body: { ...note, isPublished: true } });
      const result = await run(
        [
          'release-notes',
          'create',
          '--app',
          APP_ID,
          '--version',
          '2.1.0',
          '--title',
          'T',
          '--body-file',
          bodyFile,
          '--publish',
          '--json',
        ],
        { ATTESTLY_API_KEY: KEY },
      );
      expect(result.code).toBe(0);
      expect(stub.received[0].body).toMatchObject({ body: '# 2.1.0\n\n- Faster sync\n', isPublished: true });
      expect(JSON.parse(result.stdout)).toMatchObject({ id: NOTE_ID, isPublished: true });
    });

    it('publishes a note', async () => {
      stub.on(`POST /api/v1/org/release-notes/${NOTE_ID}/publish`, {
        status: 200,
        body: { ...note, isPublished: true, publishedAt: '2026-11-21T12:00:00.000Z' },
      });
      const result = await run(['release-notes', 'publish', '--note', NOTE_ID], { ATTESTLY_API_KEY: KEY });
      expect(result.code).toBe(0);
      expect(result.stdout).toContain(`Published release note ${NOTE_ID}`);
      expect(result.stdout).toContain('2026-11-21T12:00:00.000Z');
    });

    it('shows the envelope of a refusal with its fields, hint and request id (exit 1)', async () => {
      stub.on('POST /api/v1/org/release-notes', {
        status: 409,
        body: {
          error: 'A note for 2.1.0 already exists',
          code: 'conflict',
          hint: 'Edit it instead',
          requestId: 'req-1',
        },
      });
      const result = await run(
        ['release-notes', 'create', '--app', APP_ID, '--version', '2.1.0', '--title', 'T', '--body', 'B'],
        { ATTESTLY_API_KEY: KEY },
      );
      expect(result.code).toBe(1);
      expect(result.stdout).toBe('');
      expect(result.stderr).toBe(
        'Error: A note for 2.1.0 already exists (HTTP 409, conflict)\nHint: Edit it instead\nRequest ID: req-1\n',
      );
    });

    it('reports errors as one JSON object on stderr with --json', async () => {
      stub.on('POST /api/v1/org/release-notes', {
        status: 400,
        body: { error: 'version: is not a version number', code: 'bad_request', requestId: 'req-2' },
      });
      const result = await run(
        ['release-notes', 'create', '--json', '--app', APP_ID, '--version', 'x', '--title', 'T', '--body', 'B'],
        { ATTESTLY_API_KEY: KEY },
      );
      expect(result.code).toBe(1);
      expect(result.stdout).toBe('');
      expect(JSON.parse(result.stderr)).toEqual({
        error: 'version: is not a version number',
        status: 400,
        code: 'bad_request',
        requestId: 'req-2',
      });
    });
  });

  describe('flags toggle', () => {
    const rule = {
      id: 'b3c2a1d0-0000-4000-8000-000000000000',
      name: 'beta testers',
      priority: 0,
      isActive: true,
      conditions: [{ attribute: 'appVersion', operator: 'semver_gte', value: '2.0.0' }],
      rolloutPercentage: 25,
      value: 'true',
    };
    const flag = {
      id: FLAG_ID,
      key: 'new-sync',
      name: 'New sync',
      valueType: 'boolean',
      version: 3,
      environments: {
        production: { enabled: true, value: 'false', rules: [rule] },
        staging: { enabled: false, value: 'true', rules: [] },
      },
    };
    const session = { ATTESTLY_EMAIL: 'dev@example.com', ATTESTLY_PASSWORD: 'secret-password' };

    function signInRoutes(): void {
      stub.on('POST /api/v1/auth/login', {
        status: 200,
        body: {},
        headers: { 'Set-Cookie': ['attestly.sid=s%3Aabc.def; Path=/; HttpOnly; SameSite=Lax'] },
      });
      stub.on('POST /api/v1/auth/logout', { status: 204 });
      stub.on('POST /api/v1/auth/switch-org', { status: 200, body: {} });
    }

    it('turns an environment off keeping its value and rules, through a password session', async () => {
      signInRoutes();
      stub.on(`GET /api/v1/dashboard/flags/${FLAG_ID}`, { status: 200, body: flag });
      stub.on(`PUT /api/v1/dashboard/flags/${FLAG_ID}/environments/production`, (request) => ({
        status: 200,
        body: { ...flag, version: 4, environments: { ...flag.environments, production: request.body } },
      }));
      const result = await run(['flags', 'toggle', '--flag', FLAG_ID, '--environment', 'production', '--off'], {
        ...session,
        ATTESTLY_ORG: 'acme',
      });
      expect(result.stderr).toBe('');
      expect(result.code).toBe(0);
      expect(result.stdout).toBe('Flag new-sync is now off in production (version 4).\n');
      expect(stub.received.map((request) => `${request.method} ${request.path}`)).toEqual([
        'POST /api/v1/auth/login',
        'POST /api/v1/auth/switch-org',
        `GET /api/v1/dashboard/flags/${FLAG_ID}`,
        `PUT /api/v1/dashboard/flags/${FLAG_ID}/environments/production`,
        'POST /api/v1/auth/logout',
      ]);
      expect(stub.received[0].body).toEqual({ email: 'dev@example.com', password: 'secret-password' });
      expect(stub.received[1].body).toEqual({ slug: 'acme' });
      const put = stub.received[3];
      expect(put.headers.cookie).toBe('attestly.sid=s%3Aabc.def');
      expect(put.headers.authorization).toBeUndefined();
      const { id: _id, ...ruleWithoutId } = rule;
      expect(put.body).toEqual({ enabled: false, value: 'false', rules: [ruleWithoutId] });
    });

    it('changes nothing when the environment is already in that state', async () => {
      signInRoutes();
      stub.on(`GET /api/v1/dashboard/flags/${FLAG_ID}`, { status: 200, body: flag });
      const result = await run(['flags', 'toggle', '--flag', FLAG_ID, '--on'], session);
      expect(result.code).toBe(0);
      expect(result.stdout).toContain('already on in production');
      expect(stub.received.some((request) => request.method === 'PUT')).toBe(false);
    });

    it('names the environments a flag has when asked for another', async () => {
      signInRoutes();
      stub.on(`GET /api/v1/dashboard/flags/${FLAG_ID}`, { status: 200, body: flag });
      const result = await run(['flags', 'toggle', '--flag', FLAG_ID, '--environment', 'qa', '--on'], session);
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(/has no environment "qa" \(it has production, staging\)/);
    });

    it('finds a flag by its key within --app', async () => {
      signInRoutes();
      stub.on(`GET /api/v1/dashboard/apps/${APP_ID}/flags`, { status: 200, body: [flag] });
      stub.on(`PUT /api/v1/dashboard/flags/${FLAG_ID}/environments/staging`, (request) => ({
        status: 200,
        body: { ...flag, version: 4, environments: { ...flag.environments, staging: request.body } },
      }));
      const result = await run(
        ['flags', 'toggle', '--flag', 'new-sync', '--app', APP_ID, '--environment', 'staging', '--on'],
        session,
      );
      expect(result.stderr).toBe('');
      expect(result.stdout).toBe('Flag new-sync is now on in staging (version 4).\n');
      expect(stub.received.find((request) => request.method === 'PUT')?.body).toEqual({
        enabled: true,
        value: 'true',
        rules: [],
      });
    });

    it('names an unknown key, and asks for --app when given a key without it', async () => {
      signInRoutes();
      stub.on(`GET /api/v1/dashboard/apps/${APP_ID}/flags`, { status: 200, body: [flag] });
      const unknown = await run(['flags', 'toggle', '--flag', 'old-sync', '--app', APP_ID, '--on'], session);
      expect(unknown.code).toBe(1);
      expect(unknown.stderr).toMatch(/no flag with key "old-sync"/);
      expect(unknown.stderr).toContain(`attestly flags list --app ${APP_ID}`);
      const noApp = await run(['flags', 'toggle', '--flag', 'new-sync', '--on'], session);
      expect(noApp.code).toBe(2);
      expect(noApp.stderr).toMatch(/--flag new-sync is a key: give the app it belongs to with --app/);
    });

    it('uses the stored key rather than a password when both are there', async () => {
      stub.on(`GET /api/v1/dashboard/flags/${FLAG_ID}`, { status: 200, body: flag });
      const result = await run(['flags', 'toggle', '--flag', FLAG_ID, '--on'], { ...session, ATTESTLY_API_KEY: KEY });
      expect(result.code).toBe(0);
      expect(stub.received.map((request) => `${request.method} ${request.path}`)).toEqual([
        `GET /api/v1/dashboard/flags/${FLAG_ID}`,
      ]);
      expect(stub.received[0].headers.authorization).toBe(`Bearer ${KEY}`);
    });
  });

  describe('command line', () => {
    it.each([
      [['flags', 'toggle', '--flag', FLAG_ID], /exactly one of --on and --off/],
      [['flags', 'toggle', '--flag', FLAG_ID, '--on', '--off'], /exactly one of --on and --off/],
      [['flags', 'list'], /--app is required/],
      [['flags', 'list', '--app', APP_ID, '--colour', 'red'], /Unknown option --colour/],
      [['apps'], /Unknown command "apps"\. Try: attestly apps list/],
      [['deploy'], /Unknown command "deploy"/],
      [
        ['release-notes', 'create', '--app', APP_ID, '--version', '1', '--title', 'T'],
        /exactly one of --body and --body-file/,
      ],
      [['usage', '--base-url', 'ftp://example.com'], /must be http or https/],
    ])('refuses %j with exit 2', async (argv, message) => {
      const result = await run(argv, { ATTESTLY_API_KEY: KEY });
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(message);
      expect(stub.received).toEqual([]);
    });

    it('prints its version for --version and -v', async () => {
      const manifest = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
        version: string;
      };
      for (const flag of ['--version', '-v']) {
        const result = await run([flag]);
        expect([flag, result.code, result.stdout]).toEqual([flag, 0, `attestly ${manifest.version}\n`]);
      }
    });

    it('answers -h and --help on every command and group, and help <command>', async () => {
      const command = await run(['flags', 'toggle', '-h']);
      expect(command.code).toBe(0);
      expect(command.stdout).toMatch(/^Usage: attestly flags toggle --flag KEY --app ID/);
      expect(command.stdout).toContain('--flag takes the flag key');
      expect(command.stdout).toContain('-h, --help');
      const group = await run(['flags', '--help']);
      expect(group.code).toBe(0);
      expect(group.stdout).toMatch(/^Commands of attestly flags:/);
      expect(group.stdout).toContain('attestly flags list --app ID');
      expect(group.stdout).toContain('attestly flags toggle');
      expect(group.stdout).not.toContain('release-notes');
      expect((await run(['help', 'release-notes', 'create'])).stdout).toMatch(/^Usage: attestly release-notes create/);
      expect((await run(['-h'])).stdout).toMatch(/^Usage: attestly <command>/);
      const unknown = await run(['help', 'deploy']);
      expect(unknown.code).toBe(2);
      expect(stub.received).toEqual([]);
    });

    it('says when to retry after a 429, and how to sign in after a 401', async () => {
      stub.on('GET /api/v1/org/usage', {
        status: 429,
        body: { error: 'Too many requests', code: 'rate_limited' },
        headers: { 'Retry-After': '17' },
      });
      const limited = await run(['usage'], { ATTESTLY_API_KEY: KEY });
      expect(limited.code).toBe(1);
      expect(limited.stderr).toContain('Hint: Too many requests: try again in 17 s');
      stub.on('GET /api/v1/org/usage', { status: 401, body: { error: 'Invalid API key', code: 'unauthorized' } });
      const refused = await run(['usage'], { ATTESTLY_API_KEY: KEY });
      expect(refused.code).toBe(3);
      expect(refused.stderr).toContain('attestly login');
    });

    it('prints help with exit 0', async () => {
      const result = await run(['--help']);
      expect(result.code).toBe(0);
      for (const command of [
        'login',
        'whoami',
        'apps list',
        'flags list',
        'flags toggle',
        'release-notes create',
        'release-notes publish',
        'usage',
      ]) {
        expect(result.stdout).toContain(`  ${command}`);
      }
    });

    it('exits 1 naming the address when the service cannot be reached', async () => {
      const closed = createServer();
      await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
      const address = closed.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      await new Promise((resolve) => closed.close(resolve));
      const result = await run(['usage', '--base-url', `http://127.0.0.1:${port}`], { ATTESTLY_API_KEY: KEY });
      expect(result.code).toBe(1);
      expect(result.stderr).toBe(`Error: Cannot reach http://127.0.0.1:${port}: ECONNREFUSED\n`);
    });

    it('prints usage as a table, or the service answer as JSON', async () => {
      const usage = {
        currentMAD: 1234,
        tierLimit: 10000,
        tierName: 'Free',
        billingPeriodStart: '2026-11-01T00:00:00.000Z',
        billingPeriodEnd: '2026-12-01T00:00:00.000Z',
        usagePercent: 12.3,
        daysUntilReset: 10,
        resetDate: '2026-12-01',
      };
      stub.on('GET /api/v1/org/usage', { status: 200, body: usage });
      const human = await run(['usage'], { ATTESTLY_API_KEY: KEY });
      expect(human.stdout).toMatch(/Monthly active devices:\s+1234 of 10000 \(12\.3%\)/);
      expect(human.stdout).toMatch(/Resets:\s+2026-12-01 \(in 10 days\)/);
      const json = await run(['usage', '--json'], { ATTESTLY_API_KEY: KEY });
      expect(JSON.parse(json.stdout)).toEqual(usage);
    });

    it('lists apps as a table, an Android-only app without Bundle ID and Team ID', async () => {
      const apps = [
        {
          id: APP_ID,
          appName: 'Notes',
          bundleId: 'com.acme.notes',
          teamId: 'A1B2C3D4E5',
          isActive: true,
          isPrimary: true,
        },
        { id: FLAG_ID, appName: 'Notes Android', bundleId: null, teamId: null, isActive: true, isPrimary: false },
      ];
      stub.on('GET /api/v1/apps', { status: 200, body: apps });
      const human = await run(['apps', 'list'], { ATTESTLY_API_KEY: KEY });
      expect(human.code).toBe(0);
      const lines = human.stdout.trim().split('\n');
      expect(lines[1]).toMatch(/^\S+\s+Notes\s+com\.acme\.notes\s+A1B2C3D4E5\s+yes\s+yes$/);
      expect(lines[2]).toMatch(/^\S+\s+Notes Android\s+-\s+-\s+yes\s+no$/);
    });
  });
});

describe('openBrowser', () => {
  it('opens nothing when BROWSER disables it or no graphical session is there', () => {
    expect(openBrowser('http://example.com', { BROWSER: 'none', DISPLAY: ':0' })).toBe(false);
    if (process.platform === 'linux') expect(openBrowser('http://example.com', { PATH: process.env.PATH })).toBe(false);
  });

  it('runs the command BROWSER names with the URL', () => {
    expect(openBrowser('http://example.com', { BROWSER: '/bin/true' })).toBe(true);
  });
});
