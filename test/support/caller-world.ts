// The callers of the access matrix: every kind of credential the service knows, for one
// organization ("A", with an app and an attested device) and a second one ("B"), and the outcome
// each access declaration promises for each of them.
import { expect } from '@jest/globals';
import {
  API_KEY_SCOPES,
  type AccessRule,
  type ApiKeyScope,
  type Role,
} from '../../src/common/access/access.decorator.js';
import { ROLE_RANK } from '../../src/common/access/auth-context.js';
import type { ApiKeyType } from '../../src/api-keys/api-key.entity.js';
import { createApiKey, createOrg, createUser, PASSWORD, type TestOrg } from '../factories/identity.js';
import type { TestApp } from '../harness/test-app.js';
import { appAttestAuthority } from './app-attest-fabricator.js';
import { sessionCookie, type ProbeClient } from './probe-client.js';
import { TEAM_ID } from './sdk-client.js';

export interface KeySpec {
  readonly type: ApiKeyType;
  readonly scopes: readonly ApiKeyScope[];
  /** False: revoked. */
  readonly valid: boolean;
  /** False: a key of organization B. */
  readonly ownOrg: boolean;
  /** Role in A of the user who created the key (a `gpat_` key acts as that user). */
  readonly creatorRole?: Role;
  readonly header?: 'authorization' | 'x-api-key';
}

export interface CallerSpec {
  readonly name: string;
  /** A dashboard session; `role` null: signed in with no organization selected. */
  readonly session?: { readonly role: Role | null; readonly superAdmin?: boolean; readonly otherOrg?: boolean };
  readonly key?: KeySpec;
  /** An attestation JWT, of A's app (`rightApp`) or of B's. */
  readonly deviceToken?: { readonly rightApp: boolean };
  /** Sends `X-Bundle-ID` and `X-Team-ID` of A's app. */
  readonly tenantHeaders: boolean;
}

export const CALLERS: readonly CallerSpec[] = [
  { name: 'anonymous', tenantHeaders: false },
  { name: 'tenant headers only', tenantHeaders: true },
  { name: 'attestation JWT of the app', deviceToken: { rightApp: true }, tenantHeaders: true },
  { name: 'attestation JWT of another app', deviceToken: { rightApp: false }, tenantHeaders: true },
  { name: 'viewer session', session: { role: 'viewer' }, tenantHeaders: true },
  { name: 'member session', session: { role: 'member' }, tenantHeaders: true },
  { name: 'admin session', session: { role: 'admin' }, tenantHeaders: true },
  { name: 'owner session', session: { role: 'owner' }, tenantHeaders: true },
  { name: 'super admin session', session: { role: 'owner', superAdmin: true }, tenantHeaders: true },
  { name: 'session without organization', session: { role: null }, tenantHeaders: true },
  { name: 'owner session of another organization', session: { role: 'owner', otherOrg: true }, tenantHeaders: true },
  // Every key type with every single scope: the key model (docs/security.md) on every route.
  ...(['service', 'aat'] as const).flatMap((type) =>
    API_KEY_SCOPES.map((scope): CallerSpec => ({
      name: `${type}_ key [${scope}]`,
      key: { type, scopes: [scope], valid: true, ownOrg: true },
      tenantHeaders: true,
    })),
  ),
  ...(['viewer', 'member', 'admin'] as const).map((role): CallerSpec => ({
    name: `gpat_ key of a ${role} (all scopes)`,
    key: { type: 'gpat', scopes: API_KEY_SCOPES, valid: true, ownOrg: true, creatorRole: role },
    tenantHeaders: true,
  })),
  {
    name: 'gpat_ key of an admin [flags:read]',
    key: { type: 'gpat', scopes: ['flags:read'], valid: true, ownOrg: true, creatorRole: 'admin' },
    tenantHeaders: true,
  },
  {
    name: 'service_ key [org:read] in X-API-Key',
    key: { type: 'service', scopes: ['org:read'], valid: true, ownOrg: true, header: 'x-api-key' },
    tenantHeaders: true,
  },
  {
    name: 'service_ key without scopes',
    key: { type: 'service', scopes: [], valid: true, ownOrg: true },
    tenantHeaders: true,
  },
  {
    name: 'gpat_ key of a viewer',
    key: { type: 'gpat', scopes: [], valid: true, ownOrg: true, creatorRole: 'viewer' },
    tenantHeaders: true,
  },
  {
    name: 'gpat_ key of an admin',
    key: { type: 'gpat', scopes: [], valid: true, ownOrg: true, creatorRole: 'admin' },
    tenantHeaders: true,
  },
  { name: 'aat_ key without scopes', key: { type: 'aat', scopes: [], valid: true, ownOrg: true }, tenantHeaders: true },
  {
    name: 'service_ key of another organization (all scopes)',
    key: { type: 'service', scopes: API_KEY_SCOPES, valid: true, ownOrg: false },
    tenantHeaders: true,
  },
  {
    name: 'revoked service_ key (all scopes)',
    key: { type: 'service', scopes: API_KEY_SCOPES, valid: false, ownOrg: true },
    tenantHeaders: true,
  },
];

/** What the access layer does with a caller: let it through, or refuse with this status. */
export type AccessOutcome = 'passes' | 400 | 401 | 403;

/** Route-level guards that narrow an access declaration further (see ConsoleClaimsKeyGuard). */
export const CONSOLE_CLAIMS_GUARD = 'ConsoleClaimsKeyGuard';

/**
 * The outcome the declaration promises, written from the interface document's rules and the key
 * model of docs/security.md rather than from the guard's code: public routes admit everyone;
 * tenant routes need both identity headers (400 without) and, with `deviceToken`, an attestation
 * JWT of that app or a key of its organization holding `flags:read` (401 otherwise, 403 without
 * the scope); with `deviceTokenIfSent`, a JWT sent along must be of that app (401); a session needs the role in its selected organization (403); a key needs to be
 * accepted there (401: `apiKey` takes every key type, `personalKey` only `gpat_`), valid (401)
 * and hold every scope (403); a `gpat_` key also needs its user's role (403).
 */
export function expectedOutcome(
  rule: AccessRule | undefined,
  guards: readonly string[],
  caller: CallerSpec,
): AccessOutcome {
  if (!rule) return 403;
  if (rule.public) return 'passes';
  if (rule.tenant) {
    if (!caller.tenantHeaders) return 400;
    if (!rule.session && !rule.apiKey && !rule.deviceToken) {
      // A device token sent along is verified: one of another app is refused.
      if (rule.deviceTokenIfSent && caller.deviceToken && !caller.deviceToken.rightApp) return 401;
      return 'passes';
    }
    if (rule.deviceToken) {
      if (caller.key) {
        if (!caller.key.valid || !caller.key.ownOrg) return 401;
        return caller.key.scopes.includes('flags:read') ? 'passes' : 403;
      }
      if (caller.deviceToken) return caller.deviceToken.rightApp ? 'passes' : 401;
      return 401;
    }
  }
  if (rule.session && caller.session) {
    if (rule.session === 'user') return 'passes';
    if (caller.session.role === null) return 403;
    return ROLE_RANK[caller.session.role] >= ROLE_RANK[rule.session] ? 'passes' : 403;
  }
  if (caller.key) {
    const personal = caller.key.type === 'gpat';
    if (!rule.apiKey && !rule.personalKey) return 401;
    if (!caller.key.valid) return 401;
    const required = rule.apiKey ?? (personal ? rule.personalKey : undefined);
    if (!required) return 401;
    if (required.some((scope) => !caller.key!.scopes.includes(scope))) return 403;
    const minimum = rule.session;
    if (personal && minimum && minimum !== 'user') {
      // A key of organization B was made by B's owner; in A it is that owner's role in B that counts.
      const role = caller.key.ownOrg ? caller.key.creatorRole : 'owner';
      if (!role || ROLE_RANK[role] < ROLE_RANK[minimum]) return 403;
    }
    // Console claims take gpat_ and aat_ keys only.
    if (guards.includes(CONSOLE_CLAIMS_GUARD) && caller.key.type === 'service') return 403;
    return 'passes';
  }
  return 401;
}

export interface WorldApp {
  readonly id: string;
  readonly bundleId: string;
}

export interface World {
  readonly orgA: TestOrg;
  readonly orgB: TestOrg;
  readonly appA: WorldApp;
  readonly appB: WorldApp;
  /** Owner sessions (cookie headers) of A and B, for arranging resources. */
  readonly ownerA: Record<string, string>;
  readonly ownerB: Record<string, string>;
  /** The request headers of each caller kind, by name. */
  readonly headers: ReadonlyMap<string, Record<string, string>>;
  /** A device attested in A's app: its key id. */
  readonly deviceKeyId: string;
}

let bundleSequence = 0;

/** Signs in through the API and returns the `Cookie` header of the new session. */
export async function signInCookie(client: ProbeClient, email: string, password = PASSWORD): Promise<string> {
  const response = await client.send('post', '/api/v1/auth/login', { body: { email, password } });
  expect(response.status).toBe(200);
  const cookie = sessionCookie(response);
  if (!cookie) throw new Error('login set no session cookie');
  return cookie;
}

/** Registers an app through the API (owner session) and attests one fabricated device on it. */
async function appWithDevice(client: ProbeClient, owner: Record<string, string>) {
  const bundleId = `com.example.robust${process.pid}x${++bundleSequence}`;
  const created = await client.send('post', '/api/v1/apps', {
    headers: owner,
    body: { appName: `Robust ${bundleSequence}`, bundleId, teamId: TEAM_ID },
  });
  expect(created.status).toBe(201);
  const tenant = { 'x-bundle-id': bundleId, 'x-team-id': TEAM_ID };
  const device = (await appAttestAuthority()).createDevice();
  const challenge = (await client.send('get', '/api/v1/attestation/challenge', { headers: tenant })).body
    ?.challenge as string;
  const attestationObject = await device.attest({ challenge, teamId: TEAM_ID, bundleId });
  const validated = await client.send('post', '/api/v1/attestation/validate', {
    headers: tenant,
    body: { keyId: device.keyId, attestationObject, challenge },
  });
  expect(validated.status).toBe(200);
  return {
    app: { id: created.body!.id as string, bundleId },
    token: validated.body!.token as string,
    keyId: device.keyId,
    tenant,
  };
}

/**
 * Two Enterprise organizations (so no plan limit stands between a caller and a route) and one
 * credential of every kind in CALLERS. The app needs the fabricated App Attest root
 * (`fabricatedRootEnv()`).
 */
export async function buildWorld(t: TestApp, client: ProbeClient): Promise<World> {
  const orgA = await createOrg(t, { tier: 'enterprise' });
  const orgB = await createOrg(t, { tier: 'enterprise' });
  const usersByRole = new Map<Role, string>();
  const users = new Map<Role, { id: string; email: string }>();
  for (const role of ['owner', 'admin', 'member', 'viewer'] as const) {
    const user = await createUser(t, { org: orgA, role });
    users.set(role, user);
    usersByRole.set(role, await signInCookie(client, user.email));
  }
  const ownerB = await createUser(t, { org: orgB, role: 'owner' });
  const ownerBCookie = await signInCookie(client, ownerB.email);
  const superAdmin = await createUser(t, { superAdmin: true });
  const superCookie = await signInCookie(client, superAdmin.email);
  const switched = await client.send('post', '/api/v1/auth/switch-org', {
    headers: { cookie: superCookie },
    body: { slug: orgA.slug },
  });
  expect(switched.status).toBe(200);
  const loner = await createUser(t);
  const lonerCookie = await signInCookie(client, loner.email);

  const ownerA = { cookie: usersByRole.get('owner')! };
  const a = await appWithDevice(client, ownerA);
  const b = await appWithDevice(client, { cookie: ownerBCookie });

  const headers = new Map<string, Record<string, string>>();
  for (const caller of CALLERS) {
    const h: Record<string, string> = caller.tenantHeaders ? { ...a.tenant } : {};
    if (caller.session) {
      if (caller.session.superAdmin) h.cookie = superCookie;
      else if (caller.session.otherOrg) h.cookie = ownerBCookie;
      else if (caller.session.role === null) h.cookie = lonerCookie;
      else h.cookie = usersByRole.get(caller.session.role)!;
    }
    if (caller.deviceToken) h.authorization = `Bearer ${caller.deviceToken.rightApp ? a.token : b.token}`;
    if (caller.key) {
      const spec = caller.key;
      const key = await createApiKey(t, spec.ownOrg ? orgA : orgB, [...spec.scopes], {
        type: spec.type,
        revoked: !spec.valid,
        createdBy: spec.ownOrg ? users.get(spec.creatorRole ?? 'owner')!.id : ownerB.id,
      });
      if (spec.header === 'x-api-key') h['x-api-key'] = key;
      else h.authorization = `Bearer ${key}`;
    }
    headers.set(caller.name, h);
  }
  return {
    orgA,
    orgB,
    appA: a.app,
    appB: b.app,
    ownerA,
    ownerB: { cookie: ownerBCookie },
    headers,
    deviceKeyId: a.keyId,
  };
}
