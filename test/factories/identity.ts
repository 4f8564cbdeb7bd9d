import { randomUUID } from 'node:crypto';
import bcrypt from 'bcrypt';
import { expect } from '@jest/globals';
import type { Role } from '../../src/common/access/access.decorator.js';
import type { HttpClient, TestApp } from '../harness/test-app.js';

export const PASSWORD = 'correct-horse-battery';
let passwordHash: Promise<string> | null = null;

export interface TestOrg {
  id: string;
  slug: string;
  name: string;
}

export interface TestUser {
  id: string;
  email: string;
}

export function uniqueEmail(label = 'user'): string {
  return `${label}-${randomUUID().slice(0, 8)}@example.com`;
}

export async function createOrg(t: TestApp, options: { name?: string; tier?: string } = {}): Promise<TestOrg> {
  const name = options.name ?? `Org ${randomUUID().slice(0, 6)}`;
  const slug = `org-${randomUUID().slice(0, 12)}`;
  const [row] = await t.sql<{ id: string }>(
    `INSERT INTO organizations (name, slug, service_tier) VALUES ($1, $2, $3) RETURNING id`,
    [name, slug, options.tier ?? 'free'],
  );
  return { id: row.id, slug, name };
}

/** An active, verified user; with `org`, a member with `role` (owner by default). */
export async function createUser(
  t: TestApp,
  options: {
    email?: string;
    org?: TestOrg;
    role?: Role;
    superAdmin?: boolean;
    status?: string;
    verified?: boolean;
  } = {},
): Promise<TestUser> {
  passwordHash ??= bcrypt.hash(PASSWORD, 4);
  const email = options.email ?? uniqueEmail();
  const [row] = await t.sql<{ id: string }>(
    `INSERT INTO users (email, password_hash, status, email_verified_at, is_super_admin)
     VALUES ($1, $2, $3, CASE WHEN $4 THEN now() END, $5) RETURNING id`,
    [email, await passwordHash, options.status ?? 'active', options.verified ?? true, options.superAdmin ?? false],
  );
  if (options.org) {
    await t.sql(`INSERT INTO memberships (organization_id, user_id, role) VALUES ($1, $2, $3)`, [
      options.org.id,
      row.id,
      options.role ?? 'owner',
    ]);
  }
  return { id: row.id, email };
}

/** A signed-in browser for that user. */
export async function signIn(t: TestApp, email: string, password = PASSWORD): Promise<HttpClient> {
  const agent = t.agent();
  const response = await agent
    .post('/api/v1/auth/login')
    .set('X-Forwarded-For', randomClientIp())
    .send({ email, password });
  expect(response.status).toBe(200);
  return agent;
}

/** A new member of `org` with `role`, and that member's signed-in browser. */
export async function signedInMember(
  t: TestApp,
  org: TestOrg,
  role: Role,
): Promise<{ user: TestUser; agent: HttpClient }> {
  const user = await createUser(t, { org, role });
  return { user, agent: await signIn(t, user.email) };
}

/** An organization with a signed-in member of the given role. */
export async function orgWithMember(
  t: TestApp,
  options: { tier?: string; role?: Role } = {},
): Promise<{ org: TestOrg; user: TestUser; agent: HttpClient }> {
  const org = await createOrg(t, { tier: options.tier });
  const user = await createUser(t, { org, role: options.role ?? 'owner' });
  return { org, user, agent: await signIn(t, user.email) };
}

/** An API key of `org` with the given scopes, created through the database like the CLI does. */
export async function createApiKey(
  t: TestApp,
  org: TestOrg,
  scopes: string[],
  options: { type?: string; expiresAt?: Date; revoked?: boolean; createdBy?: string } = {},
): Promise<string> {
  const { generateApiKey } = await import('../../src/api-keys/api-key-secret.js');
  const type = (options.type ?? 'service') as 'service';
  const { key, prefix, hash } = generateApiKey(type);
  await t.sql(
    `INSERT INTO api_keys (organization_id, created_by, name, key_type, prefix, key_hash, scopes, expires_at, revoked_at)
     VALUES ($1, $2, 'test key', $3, $4, $5, $6, $7, $8)`,
    [
      org.id,
      options.createdBy ?? null,
      type,
      prefix,
      hash,
      scopes,
      options.expiresAt ?? null,
      options.revoked ? new Date() : null,
    ],
  );
  return key;
}

/** A fresh client address, so per-IP limits only meet the tests that test them. */
export function randomClientIp(): string {
  const octet = () => 1 + Math.floor(Math.random() * 250);
  return `172.${16 + Math.floor(Math.random() * 16)}.${octet()}.${octet()}`;
}
