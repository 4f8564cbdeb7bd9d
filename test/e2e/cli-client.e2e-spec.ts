import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, statSync } from 'node:fs';
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

const CLIENT = fileURLToPath(new URL('../../dist/src/cli/client/main.js', import.meta.url));
const VERIFICATION_URL = /(http:\/\/\S+\/device\?session_id=([0-9a-f-]{36}))/;

interface ClientRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

describe('command-line client (node dist/src/cli/client/main.js) against a running server', () => {
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
  ): Promise<ClientRun> {
    return new Promise((resolve, reject) => {
      const child = spawn(process.execPath, [CLIENT, ...args], {
        env: { PATH: process.env.PATH ?? '', HOME: configHome, XDG_CONFIG_HOME: configHome, BROWSER: 'none', ...env },
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
  async function loginWith(decision: 'approve' | 'deny'): Promise<ClientRun & { verificationUrl: string }> {
    const decisions: Promise<unknown>[] = [];
    let verificationUrl = '';
    const run = await client(['login', '--base-url', baseUrl], {}, (stderr) => {
      const match = VERIFICATION_URL.exec(stderr);
      if (!match || decisions.length) return;
      verificationUrl = match[1];
      // Sent now, while the client polls (a supertest request only starts once it is awaited).
      decisions.push(Promise.resolve(browser.post(`/api/v1/auth/cli/sessions/${match[2]}/${decision}`).expect(200)));
    });
    expect(decisions).toHaveLength(1);
    await Promise.all(decisions);
    return { ...run, verificationUrl };
  }

  it('logs in through the device flow and stores the key with mode 0600; whoami --json then works', async () => {
    const login = await loginWith('approve');
    expect(login.stderr).toContain('open this URL in a browser');
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

  it('explains that apps and flags need a dashboard session when only a key is there (exit 3)', async () => {
    const run = await client(['apps', 'list']);
    expect(run.code).toBe(3);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(/GET \/api\/v1\/apps accepts only a dashboard session, not an API key/);
    expect(run.stderr).toMatch(/ATTESTLY_EMAIL and ATTESTLY_PASSWORD/);
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

    const toggled = await client(['flags', 'toggle', '--flag', flagId, '--environment', 'staging', '--on'], session);
    expect(toggled).toMatchObject({ code: 0, stderr: '' });
    expect(toggled.stdout).toMatch(/^Flag new-sync is now on in staging/);
    const after = await browser.get(`/api/v1/dashboard/flags/${flagId}`).expect(200);
    expect(after.body.environments.staging.enabled).toBe(true);

    const flags = await client(['flags', 'list', '--app', app.id], session);
    expect(flags).toMatchObject({ code: 0, stderr: '' });
    expect(flags.stdout).toMatch(/new-sync\s+boolean\s+\S+\s+on \(/);
  });

  it('reports the service error envelope for a revoked key (exit 3)', async () => {
    const revoked = await createApiKey(t, org, ['org:read'], { type: 'gpat', revoked: true });
    const run = await client(['whoami', '--api-key', revoked]);
    expect(run.code).toBe(3);
    expect(run.stderr).toMatch(
      /^Error: The API key is invalid, revoked or expired \(HTTP 401, unauthorized\)\nRequest ID: \S+\n$/,
    );
  });
});
