import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLocalJWKSet, jwtVerify, type JSONWebKeySet, type JWTPayload } from 'jose';
import type { Response } from 'supertest';
import {
  CLAIMS,
  conditionalClaim,
  createClaim,
  dynamicClaim,
  externalClaim,
  insertClaim,
  staticClaim,
} from '../factories/claims.js';
import { createApiKey, createUser, orgWithMember, signIn, type TestOrg } from '../factories/identity.js';
import { startTestApp, type HttpClient, type TestApp } from '../harness/test-app.js';
import { appAttestAuthority, type FabricatedAuthority } from '../support/app-attest-fabricator.js';

const TEAM_ID = 'ABCDE12345';

/** 400 `bad_request` whose message names the field, without the 422-only `fields` member. */
function expectInvalidField(response: Response, field: string): void {
  expect(response.status).toBe(400);
  expect(response.body).toMatchObject({ code: 'bad_request', requestId: response.headers['x-request-id'] });
  expect(response.body.error).toContain(field);
  expect(response.body).not.toHaveProperty('fields');
}

interface ExternalCall {
  url: string;
  authorization: string | undefined;
}

/** A plain-HTTP loyalty service on loopback, as an `external` claim's endpoint. */
async function startLoyaltyService(): Promise<{ server: Server; url: string; calls: ExternalCall[] }> {
  const calls: ExternalCall[] = [];
  const server = createServer((request: IncomingMessage, response) => {
    calls.push({ url: request.url ?? '', authorization: request.headers.authorization });
    response.setHeader('content-type', 'application/json');
    if (request.url?.startsWith('/broken')) {
      response.statusCode = 500;
      response.end('{}');
      return;
    }
    response.end(JSON.stringify({ points: 1250, tier: { name: 'gold' } }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { server, url: `http://127.0.0.1:${port}`, calls };
}

describe('custom claims (session surface)', () => {
  let t: TestApp;
  let authority: FabricatedAuthority;
  let loyalty: Awaited<ReturnType<typeof startLoyaltyService>>;

  beforeAll(async () => {
    authority = await appAttestAuthority();
    const rootPath = join(mkdtempSync(join(tmpdir(), 'attestly-root-')), 'root.pem');
    writeFileSync(rootPath, authority.rootPem);
    t = await startTestApp({ APP_ATTEST_ROOT_CA: rootPath });
    loyalty = await startLoyaltyService();
  });
  afterAll(async () => {
    await new Promise((resolve) => loyalty.server.close(resolve));
    await t.close();
  });

  async function claimCount(org: TestOrg): Promise<number> {
    const [row] = await t.sql<{ n: number }>(
      `SELECT count(*)::int AS n FROM custom_claims WHERE organization_id = $1`,
      [org.id],
    );
    return row.n;
  }

  async function auditActions(org: TestOrg): Promise<string[]> {
    const rows = await t.sql<{ action: string }>(
      `SELECT action FROM audit_logs WHERE organization_id = $1 AND resource_type = 'claim' ORDER BY created_at, action`,
      [org.id],
    );
    return rows.map((row) => row.action);
  }

  async function memberOf(org: TestOrg, role: 'viewer' | 'member' | 'admin'): Promise<HttpClient> {
    const user = await createUser(t, { org, role });
    return signIn(t, user.email);
  }

  describe('create, read, list', () => {
    it('creates a claim and answers it with the type-specific fields under configuration', async () => {
      const { org, agent } = await orgWithMember(t, { tier: 'basic' });
      const created = await agent
        .post(CLAIMS)
        .send(staticClaim({ claimKey: 'plan', description: 'The plan', validationRules: { maxLength: 10 } }))
        .expect(201);
      expect(created.body).toEqual({
        id: expect.any(String),
        claimKey: 'plan',
        claimName: 'Claim plan',
        claimType: 'static',
        dataType: 'string',
        description: 'The plan',
        priority: 0,
        isActive: true,
        configuration: {
          staticValue: 'gold',
          conditionalRules: null,
          dynamicExpression: null,
          externalConfig: null,
          validationRules: {
            required: false,
            minLength: null,
            maxLength: 10,
            pattern: null,
            minValue: null,
            maxValue: null,
            allowedValues: null,
            customValidation: null,
          },
        },
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
      });
      expect((await agent.get(`${CLAIMS}/${created.body.id}`).expect(200)).body).toEqual(created.body);
      expect(await auditActions(org)).toEqual(['claim.created']);
    });

    it('gives every conditional rule an id and keeps it', async () => {
      const { agent } = await orgWithMember(t, { tier: 'basic' });
      const created = await createClaim(agent, conditionalClaim());
      const rules = created.configuration.conditionalRules as { id: string }[];
      expect(rules.map((rule) => rule.id)).toEqual([expect.any(String), expect.any(String)]);
      expect(rules[0].id).toMatch(/^[0-9a-f-]{36}$/);
      const fetched = await agent.get(`${CLAIMS}/${created.id}`).expect(200);
      expect(fetched.body.configuration.conditionalRules).toEqual(created.configuration.conditionalRules);
    });

    it('lists claims by priority, then key; a claim without priority goes last', async () => {
      const { agent } = await orgWithMember(t, { tier: 'basic' });
      await createClaim(agent, staticClaim({ claimKey: 'bravo', priority: 2 }));
      await createClaim(agent, staticClaim({ claimKey: 'zulu', priority: 1 }));
      await createClaim(agent, staticClaim({ claimKey: 'alpha', priority: 1 }));
      const appended = await createClaim(agent, staticClaim({ claimKey: 'aardvark' }));
      expect(appended.priority).toBe(3);
      const list = await agent.get(CLAIMS).expect(200);
      expect(list.body.map((claim: { claimKey: string }) => claim.claimKey)).toEqual([
        'alpha',
        'zulu',
        'bravo',
        'aardvark',
      ]);
    });

    it('answers 400 naming the field for a bad key, a reserved key or a wrong configuration', async () => {
      const { org, agent } = await orgWithMember(t, { tier: 'basic' });
      for (const key of ['1plan', 'plan-tier', '_plan', '', 'a'.repeat(65)]) {
        expectInvalidField(await agent.post(CLAIMS).send(staticClaim({ claimKey: key })), 'claimKey');
      }
      for (const key of ['subscription', 'Subscription', 'SUBSCRIPTION', 'sub', 'exp', 'org_id']) {
        const response = await agent.post(CLAIMS).send(staticClaim({ claimKey: key }));
        expectInvalidField(response, 'claimKey');
        expect(response.body.error).toContain('reserved');
      }
      expectInvalidField(await agent.post(CLAIMS).send(staticClaim({ staticValue: undefined })), 'staticValue');
      expectInvalidField(await agent.post(CLAIMS).send(staticClaim({ staticValue: null })), 'staticValue');
      expectInvalidField(
        await agent.post(CLAIMS).send(conditionalClaim({ conditionalRules: undefined })),
        'conditionalRules',
      );
      expectInvalidField(
        await agent.post(CLAIMS).send(dynamicClaim({ dynamicExpression: undefined })),
        'dynamicExpression',
      );
      expectInvalidField(
        await agent.post(CLAIMS).send(staticClaim({ dynamicExpression: "'x'" })),
        'dynamicExpression: is not allowed for a static claim',
      );
      expectInvalidField(
        await agent.post(CLAIMS).send(
          conditionalClaim({
            conditionalRules: [
              {
                operator: 'AND',
                conditions: [{ field: 'risk_score', operator: 'near', value: '1' }],
                value: 'x',
                priority: 1,
              },
            ],
          }),
        ),
        'conditionalRules[0].conditions[0].operator',
      );
      expectInvalidField(
        await agent.post(CLAIMS).send(dynamicClaim({ dynamicExpression: 'constructor.prototype' })),
        'dynamicExpression',
      );
      expectInvalidField(
        await agent.post(CLAIMS).send(staticClaim({ dataType: 'number', staticValue: 'many' })),
        'staticValue',
      );
      expectInvalidField(await agent.post(CLAIMS).send(staticClaim({ claimType: 'magic' })), 'claimType');
      expectInvalidField(await agent.post(CLAIMS).send(staticClaim({ dataType: 'text' })), 'dataType');
      expectInvalidField(await agent.post(CLAIMS).send(staticClaim({ claimName: '   ' })), 'claimName');
      expectInvalidField(
        await agent.post(CLAIMS).send(staticClaim({ validationRules: { pattern: '(a)\\1$' } })),
        'validationRules.pattern',
      );
      expectInvalidField(await agent.post(CLAIMS).send(staticClaim({ id: randomUUID() })), 'id');
      expectInvalidField(
        await agent
          .post(CLAIMS)
          .send(
            staticClaim({ claimType: 'dynamic', dataType: 'string', staticValue: 'x', dynamicExpression: undefined }),
          ),
        'staticValue',
      );
      expect(await claimCount(org)).toBe(0);
    });

    it('answers 409 for a key the organization already uses, in any casing, and not across organizations', async () => {
      const { agent } = await orgWithMember(t, { tier: 'basic' });
      await createClaim(agent, staticClaim({ claimKey: 'tier' }));
      expect(
        (
          await agent
            .post(CLAIMS)
            .send(staticClaim({ claimKey: 'tier' }))
            .expect(409)
        ).body.code,
      ).toBe('conflict');
      await agent
        .post(CLAIMS)
        .send(staticClaim({ claimKey: 'TIER' }))
        .expect(409);
      const other = await orgWithMember(t, { tier: 'basic' });
      await other.agent
        .post(CLAIMS)
        .send(staticClaim({ claimKey: 'tier' }))
        .expect(201);
    });
  });

  describe('access', () => {
    it('needs a session (401); API keys are not accepted here', async () => {
      const { org, agent } = await orgWithMember(t, { tier: 'basic' });
      const claim = await createClaim(agent, staticClaim());
      await t.http().get(CLAIMS).expect(401);
      await t.http().post(CLAIMS).send(staticClaim()).expect(401);
      await t.http().get(`${CLAIMS}/${claim.id}`).expect(401);
      await t.http().delete(`${CLAIMS}/${claim.id}`).expect(401);
      const key = await createApiKey(t, org, ['org:read'], { type: 'gpat' });
      await t.http().get(CLAIMS).set('Authorization', `Bearer ${key}`).expect(401);
    });

    it('lets any member read, test and preview, and only Admins write (403)', async () => {
      const { org, agent } = await orgWithMember(t, { tier: 'basic' });
      const claim = await createClaim(agent, staticClaim());
      for (const role of ['viewer', 'member'] as const) {
        const member = await memberOf(org, role);
        await member.get(CLAIMS).expect(200);
        await member.get(`${CLAIMS}/${claim.id}`).expect(200);
        await member.post(`${CLAIMS}/test`).send({ claimConfiguration: staticClaim() }).expect(200);
        await member.post(`${CLAIMS}/${claim.id}/preview`).send({}).expect(200);
        expect((await member.post(CLAIMS).send(staticClaim()).expect(403)).body.code).toBe('forbidden');
        await member.put(`${CLAIMS}/${claim.id}`).send({ claimName: 'x' }).expect(403);
        await member.delete(`${CLAIMS}/${claim.id}`).expect(403);
        await member.post(`${CLAIMS}/bulk`).send([staticClaim()]).expect(403);
        await member
          .put(`${CLAIMS}/reorder`)
          .send({ claimIds: [claim.id] })
          .expect(403);
      }
      const admin = await memberOf(org, 'admin');
      await admin.put(`${CLAIMS}/${claim.id}`).send({ claimName: 'Renamed' }).expect(200);
      await admin.delete(`${CLAIMS}/${claim.id}`).expect(204);
    });

    it("answers 404 for an unknown claim or another organization's, and 400 for a non-UUID id", async () => {
      const { agent } = await orgWithMember(t, { tier: 'basic' });
      const other = await orgWithMember(t, { tier: 'basic' });
      const foreign = await createClaim(other.agent, staticClaim());
      for (const id of [randomUUID(), foreign.id]) {
        expect((await agent.get(`${CLAIMS}/${id}`).expect(404)).body.code).toBe('not_found');
        await agent.put(`${CLAIMS}/${id}`).send({ claimName: 'x' }).expect(404);
        await agent.delete(`${CLAIMS}/${id}`).expect(404);
        await agent.post(`${CLAIMS}/${id}/preview`).send({}).expect(404);
      }
      expectInvalidField(await agent.get(`${CLAIMS}/not-a-uuid`), 'claimID');
      expect((await other.agent.get(`${CLAIMS}/${foreign.id}`).expect(200)).body.configuration.staticValue).toBe(
        'gold',
      );
    });
  });

  describe('update and delete', () => {
    it('changes any subset of fields, with an audit entry naming them', async () => {
      const { org, agent } = await orgWithMember(t, { tier: 'basic' });
      const claim = await createClaim(agent, staticClaim());
      const updated = await agent
        .put(`${CLAIMS}/${claim.id}`)
        .send({
          claimName: 'Loyalty plan',
          description: 'shown to partners',
          priority: 7,
          isActive: false,
          staticValue: 'silver',
        })
        .expect(200);
      expect(updated.body).toMatchObject({
        claimKey: claim.claimKey,
        claimName: 'Loyalty plan',
        description: 'shown to partners',
        priority: 7,
        isActive: false,
        configuration: { staticValue: 'silver' },
      });
      expect(new Date(updated.body.updatedAt).getTime()).toBeGreaterThanOrEqual(new Date(claim.updatedAt).getTime());
      const cleared = await agent.put(`${CLAIMS}/${claim.id}`).send({ description: null }).expect(200);
      expect(cleared.body.description).toBeNull();
      expect(await auditActions(org)).toEqual(['claim.created', 'claim.updated', 'claim.updated']);
      const [entry] = await t.sql<{ metadata: { fields: string[] } }>(
        `SELECT metadata FROM audit_logs WHERE organization_id = $1 AND action = 'claim.updated' ORDER BY created_at LIMIT 1`,
        [org.id],
      );
      expect(entry.metadata.fields.sort()).toEqual(['claimName', 'description', 'isActive', 'priority', 'staticValue']);
    });

    it('refuses to change the key or the type (400) but accepts them unchanged', async () => {
      const { agent } = await orgWithMember(t, { tier: 'basic' });
      const claim = await createClaim(agent, staticClaim());
      expectInvalidField(await agent.put(`${CLAIMS}/${claim.id}`).send({ claimKey: 'renamed' }), 'claimKey');
      expectInvalidField(await agent.put(`${CLAIMS}/${claim.id}`).send({ claimType: 'dynamic' }), 'claimType');
      const same = await agent
        .put(`${CLAIMS}/${claim.id}`)
        .send({ claimKey: claim.claimKey, claimType: 'static', claimName: 'Same key' })
        .expect(200);
      expect(same.body).toMatchObject({ claimKey: claim.claimKey, claimType: 'static', claimName: 'Same key' });
    });

    it('applies only the configuration field of the claim type and ignores the others', async () => {
      const { agent } = await orgWithMember(t, { tier: 'basic' });
      const claim = await createClaim(agent, staticClaim());
      const updated = await agent
        .put(`${CLAIMS}/${claim.id}`)
        .send({ staticValue: 'platinum', dynamicExpression: "'ignored'", conditionalRules: [] })
        .expect(200);
      expect(updated.body.configuration).toMatchObject({
        staticValue: 'platinum',
        dynamicExpression: null,
        conditionalRules: null,
      });
      const onlyOther = await agent.put(`${CLAIMS}/${claim.id}`).send({ dynamicExpression: "'ignored'" }).expect(200);
      expect(onlyOther.body.configuration.staticValue).toBe('platinum');
    });

    it('validates the resulting definition (400 naming the field)', async () => {
      const { agent } = await orgWithMember(t, { tier: 'basic' });
      const claim = await createClaim(agent, staticClaim());
      expectInvalidField(await agent.put(`${CLAIMS}/${claim.id}`).send({ dataType: 'number' }), 'staticValue');
      expectInvalidField(await agent.put(`${CLAIMS}/${claim.id}`).send({ staticValue: null }), 'staticValue');
      expectInvalidField(await agent.put(`${CLAIMS}/${claim.id}`).send({ priority: -1 }), 'priority');
      expectInvalidField(await agent.put(`${CLAIMS}/${claim.id}`).send({ isActive: 'yes' }), 'isActive');
      const numeric = await agent
        .put(`${CLAIMS}/${claim.id}`)
        .send({ dataType: 'number', staticValue: '42' })
        .expect(200);
      expect(numeric.body).toMatchObject({ dataType: 'number', configuration: { staticValue: '42' } });
    });

    it('deletes a claim (204), then it is gone (404)', async () => {
      const { org, agent } = await orgWithMember(t, { tier: 'basic' });
      const claim = await createClaim(agent, staticClaim());
      await agent.delete(`${CLAIMS}/${claim.id}`).expect(204);
      await agent.get(`${CLAIMS}/${claim.id}`).expect(404);
      await agent.delete(`${CLAIMS}/${claim.id}`).expect(404);
      expect(await auditActions(org)).toEqual(['claim.created', 'claim.deleted']);
    });

    it('hides external credentials in responses and keeps them when the placeholder is sent back', async () => {
      const { agent } = await orgWithMember(t, { tier: 'enterprise' });
      const claim = await createClaim(
        agent,
        externalClaim(`${loyalty.url}/points`, {
          externalConfig: {
            endpoint: `${loyalty.url}/points`,
            method: 'GET',
            headers: { 'X-Api-Key': 'header-secret', 'X-Client': 'attestly' },
            responseMapping: { jsonPath: '$.points' },
            authentication: { type: 'bearer', credentials: { token: 'external-secret-token' } },
          },
        }),
      );
      expect(claim.configuration.externalConfig).toMatchObject({
        headers: { 'X-Api-Key': '********', 'X-Client': 'attestly' },
        authentication: { type: 'bearer', credentials: { token: '********' } },
        cacheSeconds: 0,
        timeoutSeconds: 5,
        retryCount: 0,
      });
      expect(JSON.stringify((await agent.get(CLAIMS).expect(200)).body)).not.toContain('secret');

      const edited = { ...claim.configuration.externalConfig, timeoutSeconds: 3 };
      await agent.put(`${CLAIMS}/${claim.id}`).send({ externalConfig: edited }).expect(200);
      loyalty.calls.length = 0;
      const preview = await agent.post(`${CLAIMS}/${claim.id}/preview`).send({}).expect(200);
      expect(preview.body).toMatchObject({ evaluatedValue: '1250', errors: null });
      expect(loyalty.calls[0].authorization).toBe('Bearer external-secret-token');

      const placeholderOnly = {
        ...edited,
        authentication: { type: 'basic', credentials: { username: 'u', password: '********' } },
      };
      expectInvalidField(
        await agent.put(`${CLAIMS}/${claim.id}`).send({ externalConfig: placeholderOnly }),
        'externalConfig.authentication.credentials.password',
      );
    });
  });

  describe('tier limits', () => {
    it('Free: one active static claim; deactivating frees the slot; inactive claims do not count', async () => {
      const { agent } = await orgWithMember(t, { tier: 'free' });
      const first = await createClaim(agent, staticClaim());
      const refused = await agent.post(CLAIMS).send(staticClaim()).expect(403);
      expect(refused.body).toMatchObject({ code: 'claim_limit_reached', hint: expect.any(String) });
      const spare = await createClaim(agent, staticClaim({ isActive: false }));
      expect((await agent.put(`${CLAIMS}/${spare.id}`).send({ isActive: true }).expect(403)).body.code).toBe(
        'claim_limit_reached',
      );

      await agent.put(`${CLAIMS}/${first.id}`).send({ isActive: false }).expect(200);
      await agent.put(`${CLAIMS}/${spare.id}`).send({ isActive: true }).expect(200);
      await agent.post(CLAIMS).send(staticClaim()).expect(403);
      await agent.delete(`${CLAIMS}/${spare.id}`).expect(204);
      await agent.post(CLAIMS).send(staticClaim()).expect(201);
    });

    it('Free: conditional, dynamic and external claims are unavailable (403), and so is bulk', async () => {
      const { org, agent } = await orgWithMember(t, { tier: 'free' });
      for (const request of [conditionalClaim(), dynamicClaim(), externalClaim(`${loyalty.url}/points`)]) {
        expect((await agent.post(CLAIMS).send(request).expect(403)).body.code).toBe('claim_type_unavailable');
      }
      expect((await agent.post(`${CLAIMS}/bulk`).send([staticClaim()]).expect(403)).body.code).toBe(
        'bulk_claims_unavailable',
      );
      expect(await claimCount(org)).toBe(0);
    });

    it.each([
      ['basic', 5],
      ['professional', 10],
      ['enterprise', 20],
      ['growth', 5],
      ['enterprise_plus', 20],
    ])('%s: %i active claims, counting active ones only', async (tier, limit) => {
      const { agent } = await orgWithMember(t, { tier });
      const claims = (
        await agent
          .post(`${CLAIMS}/bulk`)
          .send(Array.from({ length: limit }, () => staticClaim()))
          .expect(201)
      ).body;
      expect(claims).toHaveLength(limit);
      expect((await agent.post(CLAIMS).send(dynamicClaim()).expect(403)).body.code).toBe('claim_limit_reached');
      await agent
        .post(CLAIMS)
        .send(dynamicClaim({ isActive: false }))
        .expect(201);
      await agent.put(`${CLAIMS}/${claims[0].id}`).send({ isActive: false }).expect(200);
      await agent.post(CLAIMS).send(conditionalClaim()).expect(201);
      await agent.post(CLAIMS).send(staticClaim()).expect(403);
    });

    it('external claims need Enterprise (403 on Pro and Business)', async () => {
      for (const tier of ['basic', 'professional']) {
        const { agent } = await orgWithMember(t, { tier });
        const refused = await agent
          .post(CLAIMS)
          .send(externalClaim(`${loyalty.url}/points`))
          .expect(403);
        expect(refused.body).toMatchObject({
          code: 'claim_type_unavailable',
          error: expect.stringContaining('Enterprise'),
        });
        await agent.post(CLAIMS).send(conditionalClaim()).expect(201);
        await agent.post(CLAIMS).send(dynamicClaim()).expect(201);
      }
      const { agent } = await orgWithMember(t, { tier: 'enterprise' });
      await agent
        .post(CLAIMS)
        .send(externalClaim(`${loyalty.url}/points`))
        .expect(201);
    });

    it('refuses to reactivate a claim whose type the plan no longer offers', async () => {
      const { org, agent } = await orgWithMember(t, { tier: 'basic' });
      const claim = await createClaim(agent, conditionalClaim({ isActive: false }));
      await t.sql(`UPDATE organizations SET service_tier = 'free' WHERE id = $1`, [org.id]);
      expect((await agent.put(`${CLAIMS}/${claim.id}`).send({ isActive: true }).expect(403)).body.code).toBe(
        'claim_type_unavailable',
      );
      await agent.put(`${CLAIMS}/${claim.id}`).send({ claimName: 'still editable' }).expect(200);
    });

    it('counts concurrent creates one at a time', async () => {
      const { org, agent } = await orgWithMember(t, { tier: 'basic' });
      const responses = await Promise.all(Array.from({ length: 8 }, () => agent.post(CLAIMS).send(staticClaim())));
      expect(responses.filter((response) => response.status === 201)).toHaveLength(5);
      expect(responses.filter((response) => response.status === 403)).toHaveLength(3);
      expect(await claimCount(org)).toBe(5);
    });
  });

  describe('bulk', () => {
    it('creates every claim of the array (201) with its audit entries', async () => {
      const { org, agent } = await orgWithMember(t, { tier: 'basic' });
      const response = await agent
        .post(`${CLAIMS}/bulk`)
        .send([
          staticClaim({ claimKey: 'one' }),
          dynamicClaim({ claimKey: 'two' }),
          conditionalClaim({ claimKey: 'three' }),
        ])
        .expect(201);
      expect(response.body.map((claim: { claimKey: string }) => claim.claimKey)).toEqual(['one', 'two', 'three']);
      expect(response.body.map((claim: { priority: number }) => claim.priority)).toEqual([0, 1, 2]);
      expect(await auditActions(org)).toEqual(['claim.created', 'claim.created', 'claim.created']);
    });

    it('validates every item first and creates nothing when one is invalid (400 naming the item)', async () => {
      const { org, agent } = await orgWithMember(t, { tier: 'basic' });
      const shapes = await agent
        .post(`${CLAIMS}/bulk`)
        .send([staticClaim(), staticClaim({ claimKey: '9' }), staticClaim({ isActive: 1 })]);
      expectInvalidField(shapes, '[1].claimKey');
      expect(shapes.body.error).toContain('[2].isActive');
      const definitions = await agent
        .post(`${CLAIMS}/bulk`)
        .send([staticClaim(), staticClaim({ staticValue: undefined }), dynamicClaim({ dynamicExpression: 'this' })]);
      expectInvalidField(definitions, '[1].staticValue');
      expect(definitions.body.error).toContain('[2].dynamicExpression');
      expectInvalidField(await agent.post(`${CLAIMS}/bulk`).send({ claims: [staticClaim()] }), 'body');
      expectInvalidField(await agent.post(`${CLAIMS}/bulk`).send([]), 'body');
      expectInvalidField(await agent.post(`${CLAIMS}/bulk`).send([staticClaim(), 'x']), '[1]');
      expect(await claimCount(org)).toBe(0);
    });

    it('fails as a whole when the total would pass the limit (403), counting active claims only', async () => {
      const { org, agent } = await orgWithMember(t, { tier: 'basic' });
      await agent.post(`${CLAIMS}/bulk`).send([staticClaim(), staticClaim(), staticClaim()]).expect(201);
      expect(
        (await agent.post(`${CLAIMS}/bulk`).send([staticClaim(), staticClaim(), staticClaim()]).expect(403)).body.code,
      ).toBe('claim_limit_reached');
      expect(await claimCount(org)).toBe(3);
      await agent
        .post(`${CLAIMS}/bulk`)
        .send([staticClaim(), staticClaim(), staticClaim({ isActive: false })])
        .expect(201);
      expect(await claimCount(org)).toBe(6);
    });

    it('refuses duplicate keys within the batch or with existing claims (409), and unavailable types (403)', async () => {
      const { org, agent } = await orgWithMember(t, { tier: 'basic' });
      await createClaim(agent, staticClaim({ claimKey: 'taken' }));
      await agent
        .post(`${CLAIMS}/bulk`)
        .send([staticClaim({ claimKey: 'dup' }), staticClaim({ claimKey: 'DUP' })])
        .expect(409);
      await agent
        .post(`${CLAIMS}/bulk`)
        .send([staticClaim({ claimKey: 'fresh' }), staticClaim({ claimKey: 'Taken' })])
        .expect(409);
      expect(
        (
          await agent
            .post(`${CLAIMS}/bulk`)
            .send([staticClaim(), externalClaim(`${loyalty.url}/points`)])
            .expect(403)
        ).body.code,
      ).toBe('claim_type_unavailable');
      expect(await claimCount(org)).toBe(1);
    });
  });

  describe('reorder', () => {
    it('makes each index the priority, skipping unknown and foreign ids, in one transaction (204)', async () => {
      const { org, agent } = await orgWithMember(t, { tier: 'basic' });
      const [a, b, c] = (
        await agent
          .post(`${CLAIMS}/bulk`)
          .send([staticClaim({ claimKey: 'a' }), staticClaim({ claimKey: 'b' }), staticClaim({ claimKey: 'c' })])
          .expect(201)
      ).body;
      const other = await orgWithMember(t, { tier: 'basic' });
      const foreign = await createClaim(other.agent, staticClaim({ priority: 9 }));

      await agent
        .put(`${CLAIMS}/reorder`)
        .send({ claimIds: [c.id, randomUUID(), foreign.id, a.id, b.id] })
        .expect(204);
      const list = (await agent.get(CLAIMS).expect(200)).body as { claimKey: string; priority: number }[];
      expect(list.map((claim) => [claim.claimKey, claim.priority])).toEqual([
        ['c', 0],
        ['a', 3],
        ['b', 4],
      ]);
      expect((await other.agent.get(`${CLAIMS}/${foreign.id}`).expect(200)).body.priority).toBe(9);
      expect(await auditActions(org)).toContain('claim.reordered');

      await agent
        .put(`${CLAIMS}/reorder`)
        .send({ claimIds: [b.id] })
        .expect(204);
      expect((await agent.get(`${CLAIMS}/${b.id}`).expect(200)).body.priority).toBe(0);
      await agent.put(`${CLAIMS}/reorder`).send({ claimIds: [] }).expect(204);
    });

    it('answers 400 for a body without a claimIds array of UUIDs', async () => {
      const { agent } = await orgWithMember(t, { tier: 'basic' });
      expectInvalidField(await agent.put(`${CLAIMS}/reorder`).send({}), 'claimIds');
      expectInvalidField(await agent.put(`${CLAIMS}/reorder`).send({ claimIds: 'a,b' }), 'claimIds');
      expectInvalidField(await agent.put(`${CLAIMS}/reorder`).send({ claimIds: ['nope'] }), 'claimIds');
    });
  });

  describe('test and preview', () => {
    const profile = {
      keyId: 'device-1',
      riskScore: 75,
      attestationCount: 4,
      jailbreakDetected: false,
      country: 'de',
      osVersion: '17.4',
    };

    it('evaluates an unsaved claim of each type against the given device without storing anything', async () => {
      const { org, agent } = await orgWithMember(t, { tier: 'enterprise' });
      const testContext = { deviceProfile: profile, additionalData: { plan: 'pro' } };
      const cases: [Record<string, unknown>, string][] = [
        [staticClaim({ claimKey: 'plan' }), 'gold'],
        [conditionalClaim({ claimKey: 'band' }), 'high'],
        [dynamicClaim({ claimKey: 'region' }), 'DE-pro'],
        [externalClaim(`${loyalty.url}/points`, { claimKey: 'points' }), '1250'],
      ];
      for (const [claimConfiguration, value] of cases) {
        const response = await agent.post(`${CLAIMS}/test`).send({ claimConfiguration, testContext }).expect(200);
        expect(response.body).toEqual({
          claimKey: claimConfiguration.claimKey,
          evaluatedValue: value,
          dataType: claimConfiguration.dataType,
          evaluationTime: expect.any(Number),
          errors: null,
        });
      }
      expect(await claimCount(org)).toBe(0);
      expect(await auditActions(org)).toEqual([]);
    });

    it('reports evaluation errors in the result rather than failing (200)', async () => {
      const { agent } = await orgWithMember(t, { tier: 'basic' });
      const response = await agent
        .post(`${CLAIMS}/test`)
        .send({ claimConfiguration: dynamicClaim({ dataType: 'number', dynamicExpression: "'abc'" }) })
        .expect(200);
      expect(response.body).toMatchObject({
        evaluatedValue: 'abc',
        dataType: 'number',
        errors: [expect.stringContaining('number')],
      });
      const invalid = await agent
        .post(`${CLAIMS}/test`)
        .send({ claimConfiguration: staticClaim({ staticValue: 'x', validationRules: { allowedValues: ['a', 'b'] } }) })
        .expect(200);
      expect(invalid.body.errors).toHaveLength(1);
    });

    it('answers 400 for an invalid definition or context, and 403 for external below Enterprise', async () => {
      const { agent } = await orgWithMember(t, { tier: 'professional' });
      expectInvalidField(await agent.post(`${CLAIMS}/test`).send({}), 'claimConfiguration');
      expectInvalidField(
        await agent
          .post(`${CLAIMS}/test`)
          .send({ claimConfiguration: dynamicClaim({ dynamicExpression: 'process.exit()' }) }),
        'dynamicExpression',
      );
      expectInvalidField(
        await agent
          .post(`${CLAIMS}/test`)
          .send({ claimConfiguration: staticClaim(), testContext: { deviceProfile: { keyId: 'x' } } }),
        'testContext.deviceProfile.riskScore',
      );
      expectInvalidField(
        await agent
          .post(`${CLAIMS}/test`)
          .send({ claimConfiguration: staticClaim(), testContext: { additionalData: { plan: 1 } } }),
        'testContext.additionalData',
      );
      const external = await agent
        .post(`${CLAIMS}/test`)
        .send({ claimConfiguration: externalClaim(`${loyalty.url}/points`) })
        .expect(403);
      expect(external.body.code).toBe('claim_type_unavailable');
    });

    it('previews a saved claim, active or not, with the default preview device when no profile is given', async () => {
      const { agent } = await orgWithMember(t, { tier: 'basic' });
      const band = await createClaim(agent, conditionalClaim({ isActive: false }));
      const fallback = await agent.post(`${CLAIMS}/${band.id}/preview`).send({}).expect(200);
      expect(fallback.body).toMatchObject({ claimKey: band.claimKey, evaluatedValue: 'low', errors: null });
      const risky = await agent
        .post(`${CLAIMS}/${band.id}/preview`)
        .send({ testContext: { deviceProfile: profile } })
        .expect(200);
      expect(risky.body.evaluatedValue).toBe('high');

      const device = await createClaim(
        agent,
        dynamicClaim({ dynamicExpression: "device.keyId + ':' + device.riskScore + ':' + device.attestationCount" }),
      );
      expect((await agent.post(`${CLAIMS}/${device.id}/preview`).send({}).expect(200)).body.evaluatedValue).toBe(
        'preview-device:0:1',
      );
    });
  });

  describe('claims in tokens', () => {
    let sequence = 0;

    async function registerApp(agent: HttpClient): Promise<string> {
      const bundleId = `com.example.claims${process.pid}x${++sequence}`;
      await agent
        .post('/api/v1/apps')
        .send({ appName: `Claims ${sequence}`, bundleId, teamId: TEAM_ID })
        .expect(201);
      return bundleId;
    }

    async function validate(
      bundleId: string,
      profile: Record<string, unknown> = {},
    ): Promise<{ keyId: string; payload: JWTPayload }> {
      const sdk = (request: ReturnType<HttpClient['get']>) =>
        request.set('X-Bundle-ID', bundleId).set('X-Team-ID', TEAM_ID);
      const device = authority.createDevice();
      const challenge = (await sdk(t.http().get('/api/v1/attestation/challenge')).expect(200)).body.challenge as string;
      const attestationObject = await device.attest({ challenge, teamId: TEAM_ID, bundleId });
      const response = await sdk(t.http().post('/api/v1/attestation/validate'))
        .send({ keyId: device.keyId, attestationObject, challenge, ...profile })
        .expect(200);
      const jwks = (await t.http().get('/.well-known/jwks.json').expect(200)).body as JSONWebKeySet;
      const { payload } = await jwtVerify(response.body.token as string, createLocalJWKSet(jwks), {
        audience: bundleId,
        algorithms: ['RS256'],
      });
      return { keyId: device.keyId, payload };
    }

    it('carries static, conditional, dynamic and external claims, typed, in priority order', async () => {
      const { agent } = await orgWithMember(t, { tier: 'enterprise' });
      loyalty.calls.length = 0;
      await agent
        .post(`${CLAIMS}/bulk`)
        .send([
          externalClaim(`${loyalty.url}/points`, { claimKey: 'loyalty_points', priority: 4 }),
          staticClaim({ claimKey: 'plan', priority: 1 }),
          conditionalClaim({ claimKey: 'risk_band', priority: 2 }),
          dynamicClaim({
            claimKey: 'region',
            priority: 3,
            dynamicExpression: "upper(device.country) + '-' + device.osVersion",
          }),
          staticClaim({ claimKey: 'beta', dataType: 'boolean', staticValue: 'true', priority: 5 }),
          staticClaim({ claimKey: 'features', dataType: 'array', staticValue: '["sync","export"]', priority: 6 }),
          staticClaim({ claimKey: 'limits', dataType: 'object', staticValue: '{"seats":3}', priority: 7 }),
          staticClaim({ claimKey: 'renews', dataType: 'date', staticValue: '2030-01-31', priority: 8 }),
          externalClaim(`${loyalty.url}/points`, {
            claimKey: 'loyalty_tier',
            dataType: 'string',
            priority: 9,
            externalConfig: {
              endpoint: `${loyalty.url}/tier`,
              method: 'GET',
              responseMapping: { jsonPath: '$.tier.name', transformExpression: 'upper(value)' },
            },
          }),
          staticClaim({ claimKey: 'dormant', isActive: false, priority: 0 }),
        ])
        .expect(201);
      const bundleId = await registerApp(agent);
      const { keyId, payload } = await validate(bundleId, {
        country: 'de',
        osVersion: '17.4',
        deviceModel: 'iPhone15,2',
      });

      expect(payload).toMatchObject({
        sub: keyId,
        plan: 'gold',
        risk_band: 'low',
        region: 'DE-17.4',
        loyalty_points: 1250,
        beta: true,
        features: ['sync', 'export'],
        limits: { seats: 3 },
        renews: '2030-01-31T00:00:00.000Z',
        loyalty_tier: 'GOLD',
        subscription: { status: 'none' },
      });
      expect(payload).not.toHaveProperty('dormant');
      const customKeys = Object.keys(payload).filter((key) =>
        [
          'plan',
          'risk_band',
          'region',
          'loyalty_points',
          'beta',
          'features',
          'limits',
          'renews',
          'loyalty_tier',
        ].includes(key),
      );
      expect(customKeys).toEqual([
        'plan',
        'risk_band',
        'region',
        'loyalty_points',
        'beta',
        'features',
        'limits',
        'renews',
        'loyalty_tier',
      ]);
      const pointsCall = loyalty.calls.find((call) => call.url.startsWith('/points'));
      expect(pointsCall).toEqual({
        url: `/points?device=${encodeURIComponent(keyId)}`,
        authorization: 'Bearer external-secret-token',
      });
    });

    it('leaves a failing claim out and still mints the token', async () => {
      const { agent } = await orgWithMember(t, { tier: 'enterprise' });
      await agent
        .post(`${CLAIMS}/bulk`)
        .send([
          staticClaim({ claimKey: 'plan' }),
          dynamicClaim({ claimKey: 'broken', dataType: 'number', dynamicExpression: "toNumber('many')" }),
          externalClaim(`${loyalty.url}/broken`, {
            claimKey: 'down',
            externalConfig: {
              endpoint: `${loyalty.url}/broken`,
              method: 'GET',
              responseMapping: { jsonPath: '$.points' },
            },
          }),
          staticClaim({ claimKey: 'short', validationRules: { maxLength: 2 } }),
        ])
        .expect(201);
      const { payload } = await validate(await registerApp(agent));
      expect(payload.plan).toBe('gold');
      expect(payload).not.toHaveProperty('broken');
      expect(payload).not.toHaveProperty('down');
      expect(payload).not.toHaveProperty('short');
    });

    it('reflects a change to the claims in the next token at once', async () => {
      const { agent } = await orgWithMember(t, { tier: 'basic' });
      const claim = await createClaim(agent, staticClaim({ claimKey: 'plan' }));
      const bundleId = await registerApp(agent);
      expect((await validate(bundleId)).payload.plan).toBe('gold');
      await agent.put(`${CLAIMS}/${claim.id}`).send({ staticValue: 'silver' }).expect(200);
      expect((await validate(bundleId)).payload.plan).toBe('silver');
      await agent.put(`${CLAIMS}/${claim.id}`).send({ isActive: false }).expect(200);
      expect((await validate(bundleId)).payload).not.toHaveProperty('plan');
    });

    it('after a downgrade, carries only what the plan admits: its claim types, up to its limit by priority', async () => {
      const { org, agent } = await orgWithMember(t, { tier: 'free' });
      await insertClaim(t, org, { claimKey: 'second', priority: 2 });
      await insertClaim(t, org, { claimKey: 'first', priority: 1, value: 'kept' });
      await insertClaim(t, org, { claimKey: 'computed', claimType: 'dynamic', priority: 0 });
      const { payload } = await validate(await registerApp(agent));
      expect(payload.first).toBe('kept');
      expect(payload).not.toHaveProperty('second');
      expect(payload).not.toHaveProperty('computed');
    });
  });
});
