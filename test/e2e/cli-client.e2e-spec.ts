import { execFileSync, spawn } from 'node:child_process';
import { lstatSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  PASSWORD,
  createApiKey,
  createOrg,
  createUser,
  signIn,
  type TestOrg,
  type TestUser,
} from '../factories/identity.js';
import { createAppRow } from '../factories/organization.js';
import type { HttpClient, TestApp } from '../harness/test-app.js';
import { startListeningApp } from '../support/listening-app.js';

const CLI_PACKAGE = fileURLToPath(new URL('../../packages/cli/', import.meta.url));
const CLIENT = join(CLI_PACKAGE, 'dist/main.js');
const VERIFICATION_URL = /(http:\/\/\S+\/device\?session_id=([0-9a-f-]{36}))/;

interface ClientRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

describe('command-line client (packages/cli, built) against a running server', () => {
  let t: TestApp;
  let baseUrl: string;
  let org: TestOrg;
  let user: TestUser;
  let browser: HttpClient;
  let configHome: string;

  beforeAll(async () => {
    ({ t, baseUrl } = await startListeningApp());
    org = await createOrg(t, { name: 'Client Co', tier: 'professional' });
    user = await createUser(t, { org, role: 'member' });
    browser = await signIn(t, user.email);
    configHome = mkdtempSync(join(tmpdir(), 'attestly-cli-home-'));
  });
  afterAll(async () => {
    await t.close();
  });

  /**
   * Runs the compiled client in a clean environment (its own config directory, no browser);
   * `onStderr` sees stderr as it arrives, so a test can act while the client waits.
   */
  function client(
    args: string[],
    env: Record<string, string> = {},
    onStderr?: (text: string) => void,
    bin = CLIENT,
  ): Promise<ClientRun> {
    return new Promise((resolve, reject) => {
      const home = env.HOME ?? configHome;
      const child = spawn(process.execPath, [bin, ...args], {
        env: { PATH: process.env.PATH ?? '', HOME: home, XDG_CONFIG_HOME: home, BROWSER: 'none', ...env },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => {
        stderr += chunk.toString();
        onStderr?.(stderr);
      });
      const timer = setTimeout(() => child.kill(), 25_000);
      child.on('error', reject);
      child.on('close', (code) => {
        clearTimeout(timer);
        resolve({ code, stdout, stderr });
      });
    });
  }

  /** `login`, with the signed-in browser approving (or denying) the session once its URL is printed. */
  async function loginWith(
    decision: 'approve' | 'deny',
    env: Record<string, string> = {},
    bin = CLIENT,
  ): Promise<ClientRun & { verificationUrl: string }> {
    const decisions: Promise<unknown>[] = [];
    let verificationUrl = '';
    const run = await client(
      ['login', '--base-url', baseUrl],
      env,
      (stderr) => {
        const match = VERIFICATION_URL.exec(stderr);
        if (!match || decisions.length) return;
        verificationUrl = match[1];
        // Sent now, while the client polls (a supertest request only starts once it is awaited).
        decisions.push(Promise.resolve(browser.post(`/api/v1/auth/cli/sessions/${match[2]}/${decision}`).expect(200)));
      },
      bin,
    );
    expect(decisions).toHaveLength(1);
    await Promise.all(decisions);
    return { ...run, verificationUrl };
  }

  it('logs in through the device flow and stores the key with mode 0600; whoami --json then works', async () => {
    const login = await loginWith('approve');
    expect(login.stderr).toContain('open this URL in a browser');
    // The RFC 8628 user code, to compare with the approval page.
    expect(login.stderr).toMatch(/Your code: [BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}\n/);
    expect(login.verificationUrl).toMatch(new RegExp(`^${baseUrl}/device\\?session_id=`));
    expect(login).toMatchObject({ code: 0 });
    expect(login.stdout).toContain(`Signed in to ${baseUrl} as ${user.email}.`);

    const file = join(configHome, 'attestly', 'credentials.json');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const stored = JSON.parse(readFileSync(file, 'utf8')) as { baseUrl: string; apiKey: string; email: string };
    expect(stored).toEqual({ baseUrl, apiKey: expect.stringMatching(/^gpat_/), email: user.email });

    // The stored file supplies both the key and the base URL.
    const whoami = await client(['whoami', '--json']);
    expect(whoami).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(whoami.stdout)).toEqual({
      baseUrl,
      email: user.email,
      apiKeyPrefix: expect.stringMatching(/^gpat_/),
    });

    const usage = await client(['usage', '--json']);
    expect(usage).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(usage.stdout)).toMatchObject({ currentMAD: 0, tierName: expect.any(String) });
  });

  it('exits 4 when the browser denies the sign-in, storing nothing new', async () => {
    const before = readFileSync(join(configHome, 'attestly', 'credentials.json'), 'utf8');
    const login = await loginWith('deny');
    expect(login.code).toBe(4);
    expect(login.stderr).toMatch(/denied or has expired/);
    expect(readFileSync(join(configHome, 'attestly', 'credentials.json'), 'utf8')).toBe(before);
  });

  it('creates and publishes a release note with the stored key', async () => {
    const app = await createAppRow(t, org);
    const created = await client([
      'release-notes',
      'create',
      '--json',
      '--app',
      app.id,
      '--version',
      '2.1.0',
      '--title',
      'Faster sync',
      '--body',
      'Sync is twice as fast.',
    ]);
    expect(created).toMatchObject({ code: 0, stderr: '' });
    const note = JSON.parse(created.stdout) as { id: string; isPublished: boolean };
    expect(note).toMatchObject({ appId: app.id, version: '2.1.0', isPublished: false });

    const published = await client(['release-notes', 'publish', '--note', note.id]);
    expect(published).toMatchObject({ code: 0, stderr: '' });
    expect(published.stdout).toContain(`Published release note ${note.id}`);
    const [row] = await t.sql(`SELECT published_at IS NOT NULL AS published FROM release_notes WHERE id = $1`, [
      note.id,
    ]);
    expect(row).toEqual({ published: true });
  });

  it("lists apps and flags and toggles a flag with the key its own login stored (the user's role applies)", async () => {
    const app = await createAppRow(t, org, { name: 'Key App' });
    await browser
      .post(`/api/v1/dashboard/apps/${app.id}/flags`)
      .send({ key: 'key-flag', name: 'Key flag', valueType: 'boolean', defaultValue: 'false' })
      .expect(201);
    const apps = await client(['apps', 'list']);
    expect(apps).toMatchObject({ code: 0, stderr: '' });
    expect(apps.stdout).toContain('Key App');
    const toggled = await client(['flags', 'toggle', '--app', app.id, '--flag', 'key-flag', '--on']);
    expect(toggled).toMatchObject({ code: 0, stderr: '' });
    expect(toggled.stdout).toMatch(/^Flag key-flag is now on in production/);
    const flags = await client(['flags', 'list', '--app', app.id]);
    expect(flags.stdout).toMatch(/key-flag\s+boolean\s+on \(false\)/);

    // Demoted to Viewer, the same key still reads but no longer writes, on its next request.
    await t.sql(`UPDATE memberships SET role = 'viewer' WHERE user_id = $1`, [user.id]);
    try {
      const refused = await client(['flags', 'toggle', '--app', app.id, '--flag', 'key-flag', '--off']);
      expect(refused.code).toBe(3);
      expect(refused.stderr).toMatch(/needs the member role or higher \(HTTP 403, forbidden\)/);
      expect((await client(['flags', 'list', '--app', app.id])).code).toBe(0);
    } finally {
      await t.sql(`UPDATE memberships SET role = 'member' WHERE user_id = $1`, [user.id]);
    }
  });

  it('lists apps and flags and toggles a flag through a password session', async () => {
    const session = { ATTESTLY_EMAIL: user.email, ATTESTLY_PASSWORD: PASSWORD, ATTESTLY_ORG: org.slug };
    const app = await createAppRow(t, org, { name: 'Toggle App' });
    const flag = await browser
      .post(`/api/v1/dashboard/apps/${app.id}/flags`)
      .send({ key: 'new-sync', name: 'New sync', valueType: 'boolean', defaultValue: 'false' })
      .expect(201);
    const flagId = flag.body.id as string;

    const apps = await client(['apps', 'list', '--json'], session);
    expect(apps).toMatchObject({ code: 0, stderr: '' });
    expect((JSON.parse(apps.stdout) as { id: string }[]).map((entry) => entry.id)).toContain(app.id);

    const toggled = await client(
      ['flags', 'toggle', '--flag', 'new-sync', '--app', app.id, '--environment', 'staging', '--on'],
      session,
    );
    expect(toggled).toMatchObject({ code: 0, stderr: '' });
    expect(toggled.stdout).toMatch(/^Flag new-sync is now on in staging/);
    const after = await browser.get(`/api/v1/dashboard/flags/${flagId}`).expect(200);
    expect(after.body.environments.staging.enabled).toBe(true);

    const flags = await client(['flags', 'list', '--app', app.id], session);
    expect(flags).toMatchObject({ code: 0, stderr: '' });
    // Key, type, then each environment's state with the value it serves.
    expect(flags.stdout).toMatch(/new-sync\s+boolean\s+off \(false\)\s+on \(false\)\s+off \(false\)/);
  });

  it('says a toggle of a protected environment waits for approval, and changes nothing yet', async () => {
    const enterprise = await createOrg(t, { name: 'Approval Co', tier: 'enterprise' });
    const admin = await createUser(t, { org: enterprise, role: 'admin' });
    const member = await createUser(t, { org: enterprise, role: 'member' });
    const adminBrowser = await signIn(t, admin.email);
    const app = await createAppRow(t, enterprise, { name: 'Guarded App' });
    const flag = await adminBrowser
      .post(`/api/v1/dashboard/apps/${app.id}/flags`)
      .send({ key: 'guarded', name: 'Guarded', valueType: 'boolean', defaultValue: 'false' })
      .expect(201);
    const flagId = flag.body.id as string;
    await adminBrowser
      .put(`/api/v1/dashboard/flags/${flagId}/environments/production/approval`)
      .send({ requireApproval: true })
      .expect(200);

    // A home of its own: the credentials an earlier test's login stored are another organization's.
    const home = mkdtempSync(join(tmpdir(), 'attestly-cli-home-'));
    const session = {
      HOME: home,
      ATTESTLY_BASE_URL: baseUrl,
      ATTESTLY_EMAIL: member.email,
      ATTESTLY_PASSWORD: PASSWORD,
      ATTESTLY_ORG: enterprise.slug,
    };
    const toggled = await client(['flags', 'toggle', '--flag', 'guarded', '--app', app.id, '--on'], session);
    expect(toggled).toMatchObject({ code: 0, stderr: '' });
    expect(toggled.stdout).toMatch(/^Flag guarded needs approval in production: change request \S+ \(pending\)/);
    const after = await adminBrowser.get(`/api/v1/dashboard/flags/${flagId}`).expect(200);
    expect(after.body.environments.production.enabled).toBe(false);
  });

  it('reports the service error envelope for a revoked key (exit 3)', async () => {
    const revoked = await createApiKey(t, org, ['org:read'], { type: 'gpat', revoked: true });
    const run = await client(['whoami', '--api-key', revoked]);
    expect(run.code).toBe(3);
    expect(run.stderr).toMatch(
      /^Error: The API key is invalid, revoked or expired \(HTTP 401, unauthorized\)\nHint: Sign in with `attestly login`, or pass a valid key with --api-key\nRequest ID: \S+\n$/,
    );
  });

  it('installs from npm pack into an empty directory, under 10 MB, and signs in, lists apps and flags', async () => {
    const work = mkdtempSync(join(tmpdir(), 'attestly-cli-pack-'));
    // The package is built by the test run's global setup; packing skips the prepack build.
    const packed = JSON.parse(
      execFileSync('npm', ['pack', CLI_PACKAGE, '--ignore-scripts', '--json', '--pack-destination', work], {
        encoding: 'utf8',
      }),
    ) as { filename: string; files: { path: string }[] }[];
    expect(packed[0].files.map((file) => file.path)).toEqual(
      expect.arrayContaining(['package.json', 'dist/main.js', 'README.md']),
    );
    expect(packed[0].files.some((file) => file.path.startsWith('src/'))).toBe(false);
    const prefix = join(work, 'install');
    mkdirSync(prefix);
    execFileSync(
      'npm',
      ['install', '--prefix', prefix, '--no-audit', '--no-fund', '--ignore-scripts', join(work, packed[0].filename)],
      { encoding: 'utf8' },
    );
    const installed = join(prefix, 'node_modules');
    expect(readdirSync(installed).filter((name) => !name.startsWith('.'))).toEqual(['@attestly']);
    expect(directorySize(installed)).toBeLessThan(10 * 1024 * 1024);
    const bin = join(installed, '@attestly/cli/dist/main.js');

    const version = await client(['--version'], {}, undefined, bin);
    expect(version).toMatchObject({ code: 0, stdout: `attestly ${cliVersion()}\n` });

    const home = mkdtempSync(join(tmpdir(), 'attestly-cli-pack-home-'));
    const login = await loginWith('approve', { HOME: home }, bin);
    expect(login).toMatchObject({ code: 0 });
    expect(login.stdout).toContain(`Signed in to ${baseUrl} as ${user.email}.`);

    const app = await createAppRow(t, org, { name: 'Packed App' });
    await browser
      .post(`/api/v1/dashboard/apps/${app.id}/flags`)
      .send({ key: 'packed-flag', name: 'Packed', valueType: 'string', defaultValue: 'blue' })
      .expect(201);
    // Both with the key login stored in this home, nothing else.
    const session = { HOME: home };
    const apps = await client(['apps', 'list'], session, undefined, bin);
    expect(apps).toMatchObject({ code: 0, stderr: '' });
    expect(apps.stdout).toContain('Packed App');
    const flags = await client(['flags', 'list', '--app', app.id], session, undefined, bin);
    expect(flags).toMatchObject({ code: 0, stderr: '' });
    expect(flags.stdout).toMatch(/packed-flag\s+string\s+off \(blue\)/);
  });
});

function cliVersion(): string {
  return (JSON.parse(readFileSync(join(CLI_PACKAGE, 'package.json'), 'utf8')) as { version: string }).version;
}

function directorySize(path: string): number {
  const stat = lstatSync(path);
  if (!stat.isDirectory()) return stat.size;
  return readdirSync(path).reduce((total, name) => total + directorySize(join(path, name)), 0);
}
