import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startTestApp, type TestApp } from '../harness/test-app.js';
import { createOrg, createUser, signIn, uniqueEmail } from '../factories/identity.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const CLI = fileURLToPath(new URL('../../dist/src/cli/main.js', import.meta.url));

interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

describe('management CLI (node dist/src/cli/main.js)', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  /** Runs one CLI command against this file's database; never rejects. */
  function cli(...args: string[]): Promise<CliRun> {
    return cliWith({}, ...args);
  }

  function cliWith(env: Record<string, string>, ...args: string[]): Promise<CliRun> {
    return new Promise((resolve) => {
      execFile(
        process.execPath,
        [CLI, ...args],
        {
          cwd: ROOT,
          timeout: 30_000,
          env: {
            ...process.env,
            DATABASE_URL: t.config.databaseUrl,
            LOG_LEVEL: 'silent',
            BCRYPT_ROUNDS: '4',
            ...env,
          },
        },
        (error, stdout, stderr) => {
          const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
          resolve({ code, stdout, stderr });
        },
      );
    });
  }

  /** The one JSON object a successful command prints. */
  function printed(run: CliRun): Record<string, unknown> {
    expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: '' });
    const lines = run.stdout.trim().split('\n');
    expect(lines).toHaveLength(1);
    return JSON.parse(lines[0]) as Record<string, unknown>;
  }

  function failed(run: CliRun, message: RegExp): void {
    expect(run.code).not.toBe(0);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(message);
    expect(run.stderr).not.toMatch(/\n\s+at /); // one clear line, not a stack trace
  }

  it('user:create makes an active Owner of a new Business organization who can sign in over HTTP', async () => {
    const email = uniqueEmail('cli-owner');
    const result = printed(
      await cli(
        'user:create',
        '--email',
        email,
        '--password',
        'a-long-password',
        '--org-name',
        'Acme CLI',
        '--tier',
        'professional',
      ),
    );
    expect(result).toEqual({
      userId: expect.stringMatching(UUID),
      organizationId: expect.stringMatching(UUID),
      organizationSlug: expect.any(String),
    });

    const login = await t.http().post('/api/v1/auth/login').send({ email, password: 'a-long-password' }).expect(200);
    expect(login.body.user).toEqual({
      id: result.userId,
      email,
      role: 'owner',
      organizationId: result.organizationId,
      isActive: true,
    });
    expect(login.body.organization).toEqual({
      id: result.organizationId,
      name: 'Acme CLI',
      slug: result.organizationSlug,
      serviceTier: 'professional',
    });
    expect(login.body.entitlements).toMatchObject({
      tier: 'professional',
      tierDisplay: 'Business',
      limits: {
        maxApps: 10,
        maxMAD: 250_000,
        maxSeats: 10,
        maxWebhooks: 10,
        maxEnvironments: 10,
        maxRulesPerFlag: 20,
        analyticsRetentionDays: 90,
        rateLimit: 200,
      },
      features: { webhooks: true, fraudDetection: true, sso: false },
    });

    const [user] = await t.sql<{ is_super_admin: boolean; password_hash: string }>(
      `SELECT is_super_admin, password_hash FROM users WHERE id = $1`,
      [result.userId],
    );
    expect(user.is_super_admin).toBe(false);
    expect(user.password_hash).not.toContain('a-long-password');
    await t.http().post('/api/v1/auth/login').send({ email, password: 'a-wrong-password' }).expect(401);
  });

  it('user:create without --org-name makes a user with no organization, on the free tier by default with one', async () => {
    const loner = printed(
      await cli('user:create', '--email', uniqueEmail('cli-loner'), '--password', 'a-long-password'),
    );
    expect(loner).toEqual({ userId: expect.stringMatching(UUID), organizationId: null, organizationSlug: null });
    const memberships = await t.sql(`SELECT 1 FROM memberships WHERE user_id = $1`, [loner.userId]);
    expect(memberships).toHaveLength(0);

    const freeOwner = printed(
      await cli(
        'user:create',
        '--email',
        uniqueEmail('cli-free'),
        '--password',
        'a-long-password',
        '--org-name',
        'Free Org',
      ),
    );
    const [org] = await t.sql<{ service_tier: string }>(`SELECT service_tier FROM organizations WHERE id = $1`, [
      freeOwner.organizationId,
    ]);
    expect(org.service_tier).toBe('free');
  });

  it('user:create --super-admin sets the super admin flag', async () => {
    const email = uniqueEmail('cli-root');
    const result = printed(
      await cli('user:create', '--email', email, '--password', 'a-long-password', '--super-admin'),
    );
    const [user] = await t.sql<{ is_super_admin: boolean; status: string }>(
      `SELECT is_super_admin, status FROM users WHERE id = $1`,
      [result.userId],
    );
    expect(user).toEqual({ is_super_admin: true, status: 'active' });

    // A super admin sees every organization, including ones they do not belong to.
    const stranger = await createOrg(t, { name: 'Not mine' });
    const agent = await signIn(t, email, 'a-long-password');
    const orgs = await agent.get('/api/v1/auth/orgs').expect(200);
    expect((orgs.body as { slug: string }[]).map((org) => org.slug)).toContain(stranger.slug);
  });

  it('user:create refuses a duplicate email (in any letter case) with a clear message and a non-zero exit', async () => {
    const email = uniqueEmail('cli-dup');
    printed(await cli('user:create', '--email', email, '--password', 'a-long-password', '--org-name', 'First'));
    const duplicate = await cli(
      'user:create',
      '--email',
      email.toUpperCase(),
      '--password',
      'another-password',
      '--org-name',
      'Second',
    );
    failed(duplicate, /already exists/);
    expect(duplicate.stderr).toContain(email.toUpperCase());
    const users = await t.sql(`SELECT 1 FROM users WHERE lower(email) = lower($1)`, [email]);
    expect(users).toHaveLength(1);
    const orgs = await t.sql(`SELECT 1 FROM organizations WHERE name = 'Second'`);
    expect(orgs).toHaveLength(0);
  });

  it('user:create refuses a password shorter than 8 characters, and creates nothing', async () => {
    const email = uniqueEmail('cli-short');
    failed(
      await cli('user:create', '--email', email, '--password', 'short', '--org-name', 'Short'),
      /password.*8 characters/,
    );
    expect(await t.sql(`SELECT 1 FROM users WHERE email = $1`, [email])).toHaveLength(0);
  });

  it('user:create refuses a missing or invalid email and an unknown tier', async () => {
    failed(await cli('user:create', '--password', 'a-long-password'), /--email is required/);
    failed(await cli('user:create', '--email', 'not-an-email', '--password', 'a-long-password'), /--email/);
    const email = uniqueEmail('cli-tier');
    failed(
      await cli(
        'user:create',
        '--email',
        email,
        '--password',
        'a-long-password',
        '--org-name',
        'X',
        '--tier',
        'platinum',
      ),
      /--tier/,
    );
    expect(await t.sql(`SELECT 1 FROM users WHERE email = $1`, [email])).toHaveLength(0);
  });

  it('org:set-tier changes the plan that /auth/me shows', async () => {
    const org = await createOrg(t, { tier: 'free' });
    const owner = await createUser(t, { org, role: 'owner' });
    const agent = await signIn(t, owner.email);
    const before = await agent.get('/api/v1/auth/me').expect(200);
    expect(before.body.entitlements.tier).toBe('free');

    const result = printed(await cli('org:set-tier', '--org', org.slug, '--tier', 'enterprise'));
    expect(result).toEqual({ organizationId: org.id, organizationSlug: org.slug, tier: 'enterprise' });

    const after = await agent.get('/api/v1/auth/me').expect(200);
    expect(after.body.organization).toMatchObject({ id: org.id, serviceTier: 'enterprise' });
    expect(after.body.entitlements).toMatchObject({
      tier: 'enterprise',
      tierDisplay: 'Enterprise',
      limits: { maxApps: null },
    });
  });

  it('org:set-tier exits non-zero for an unknown slug or an unknown tier, and changes nothing', async () => {
    failed(await cli('org:set-tier', '--org', 'no-such-org-slug', '--tier', 'enterprise'), /no-such-org-slug/);
    const org = await createOrg(t, { tier: 'basic' });
    failed(await cli('org:set-tier', '--org', org.slug, '--tier', 'platinum'), /--tier/);
    failed(await cli('org:set-tier', '--org', org.slug), /--tier is required/);
    const [row] = await t.sql<{ service_tier: string }>(`SELECT service_tier FROM organizations WHERE id = $1`, [
      org.id,
    ]);
    expect(row.service_tier).toBe('basic');
  });

  it('apikey:create prints a gpat key acting as --user, its id and prefix, and the key works on /auth/me', async () => {
    const org = await createOrg(t, { tier: 'professional' });
    const member = await createUser(t, { org, role: 'member' });
    failed(await cli('apikey:create', '--org', org.slug, '--scopes', 'org:read', '--type', 'gpat'), /--user EMAIL/);
    failed(
      await cli(
        'apikey:create',
        '--org',
        org.slug,
        '--scopes',
        'org:read',
        '--type',
        'gpat',
        '--user',
        'x@example.com',
      ),
      /not an active member/,
    );
    const result = printed(
      await cli(
        'apikey:create',
        '--org',
        org.slug,
        '--scopes',
        'org:read,feedback:read',
        '--type',
        'gpat',
        '--user',
        member.email,
      ),
    );
    expect(result).toEqual({
      key: expect.stringMatching(/^gpat_[A-Za-z0-9_-]{32,64}$/),
      id: expect.stringMatching(UUID),
      prefix: expect.stringMatching(/^gpat_.+/),
    });
    const key = result.key as string;
    expect(key.startsWith(result.prefix as string)).toBe(true);
    expect((result.prefix as string).length).toBeLessThan(key.length);

    const identity = await t.http().get('/api/v1/auth/me').set('Authorization', `Bearer ${key}`).expect(200);
    expect(identity.body).toEqual({ email: member.email, apiKeyPrefix: result.prefix });

    const [row] = await t.sql<{ organization_id: string; key_type: string; scopes: string[]; key_hash: string }>(
      `SELECT organization_id, key_type, scopes, key_hash FROM api_keys WHERE id = $1`,
      [result.id],
    );
    expect(row).toEqual({
      organization_id: org.id,
      key_type: 'gpat',
      scopes: ['org:read', 'feedback:read'],
      key_hash: createHash('sha256').update(key).digest('hex'),
    });
  });

  it('apikey:create makes a service key by default', async () => {
    const org = await createOrg(t);
    const result = printed(
      await cli('apikey:create', '--org', org.slug, '--scopes', 'release_notes:read', '--name', 'Deploy bot'),
    );
    expect(result.key).toMatch(/^service_/);
    const [row] = await t.sql<{ name: string; key_type: string }>(`SELECT name, key_type FROM api_keys WHERE id = $1`, [
      result.id,
    ]);
    expect(row).toEqual({ name: 'Deploy bot', key_type: 'service' });
  });

  it('apikey:create exits non-zero for an unknown scope, an unknown type or slug, and admin:team below Enterprise', async () => {
    const org = await createOrg(t, { tier: 'professional' });
    failed(await cli('apikey:create', '--org', org.slug, '--scopes', 'org:read,org:destroy'), /--scopes/);
    failed(await cli('apikey:create', '--org', org.slug, '--scopes', 'org:read', '--type', 'root'), /--type/);
    failed(await cli('apikey:create', '--org', 'no-such-org-slug', '--scopes', 'org:read'), /no-such-org-slug/);
    failed(await cli('apikey:create', '--org', org.slug, '--scopes', 'admin:team'), /Enterprise/);
    expect(await t.sql(`SELECT 1 FROM api_keys WHERE organization_id = $1`, [org.id])).toHaveLength(0);
  });

  it('migrate reports no pending migrations on a migrated database', async () => {
    const run = await cli('migrate');
    expect(run).toEqual({ code: 0, stdout: '{"applied":[]}\n', stderr: '' });
  });

  it('exits non-zero with the usage for an unknown command', async () => {
    const run = await cli('user:destroy-everything');
    expect(run.code).not.toBe(0);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(/Usage/);
    expect(run.stderr).toContain('user:create');
  });

  /** A refused command line: exit 2, the problem and the command's usage line on stderr, nothing on stdout. */
  function misused(run: CliRun, command: string, problem: RegExp): void {
    expect({ code: run.code, stdout: run.stdout }).toEqual({ code: 2, stdout: '' });
    const [message, usage, ...rest] = run.stderr.trim().split('\n');
    expect(message).toMatch(problem);
    expect(usage).toMatch(new RegExp(`^Usage: npm run cli -- ${command}( |$)`));
    expect(rest).toEqual([]);
  }

  it('exits 2 with the usage line for a stray positional argument', async () => {
    misused(await cli('org:set-tier', 'acme', '--tier', 'free'), 'org:set-tier', /Unexpected argument "acme"/);
  });

  it('refuses an option its command does not take with exit 2 and the usage line, and does nothing', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'attestly-cli-flags-'));
    try {
      const run = await cliWith({ DATA_DIR: dataDir }, 'attest:demo-root', '--bogus', '1');
      misused(run, 'attest:demo-root', /Unknown option --bogus/);
      expect(readdirSync(dataDir)).toEqual([]);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
    const email = uniqueEmail('cli-bogus');
    misused(
      await cli('user:create', '--email', email, '--password', 'a-long-password', '--org', 'acme'),
      'user:create',
      /Unknown option --org/,
    );
    misused(await cli('jwks', '--json'), 'jwks', /Unknown option --json/);
    expect(await t.sql(`SELECT 1 FROM users WHERE email = $1`, [email])).toHaveLength(0);
  });

  it('a missing value or a value given to a flag is a usage error (exit 2); a missing required option is one line, exit 1', async () => {
    misused(await cli('user:create', '--email'), 'user:create', /--email needs a value/);
    misused(await cli('user:create', '--email', '--password', 'x'), 'user:create', /--email needs a value/);
    misused(
      await cli('user:create', '--email', 'a@example.com', '--password', 'a-long-password', '--super-admin=yes'),
      'user:create',
      /--super-admin takes no value/,
    );
    const missing = await cli('org:set-tier', '--org', 'acme');
    expect(missing).toEqual({ code: 1, stdout: '', stderr: 'org:set-tier: --tier is required\n' });
  });

  it('--help (or -h) on every command prints its usage line and what it does, exit 0, without a database', async () => {
    const listing = await cliWith({}, '--help');
    expect(listing.code).toBe(0);
    const names = /Commands: (.+)/.exec(listing.stdout)?.[1].split(', ') ?? [];
    expect(names).toEqual(expect.arrayContaining(['migrate', 'user:create', 'apikey:create', 'jwks', 'attest:verify']));
    for (const name of names) {
      // An unreachable DATABASE_URL: help must not need the database.
      const run = await cliWith(
        { DATABASE_URL: 'postgres://postgres@127.0.0.1:1/none' },
        name,
        name === 'jwks' ? '-h' : '--help',
      );
      expect({ name, code: run.code, stderr: run.stderr }).toEqual({ name, code: 0, stderr: '' });
      const [usage, summary] = run.stdout.trim().split('\n');
      expect(usage).toMatch(new RegExp(`^Usage: npm run cli -- ${name}( |$)`));
      expect(summary).toMatch(/\w/);
    }
    const help = await cliWith({}, 'apikey:create', '--help');
    expect(help.stdout).toContain('--org SLUG --scopes a,b [--type gpat|aat|service] [--user EMAIL] [--name NAME]');
  });
});
