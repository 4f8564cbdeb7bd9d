import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Response } from 'supertest';
import {
  CLAIMS,
  CONSOLE_CLAIMS,
  conditionalClaim,
  createClaim,
  dynamicClaim,
  externalClaim,
  staticClaim,
  toConsoleRequest,
} from '../factories/claims.js';
import { createApiKey, createUser, orgWithMember, signIn, type TestOrg } from '../factories/identity.js';
import { startTestApp, type HttpClient, type TestApp } from '../harness/test-app.js';

function expectInvalidField(response: Response, field: string): void {
  expect(response.status).toBe(400);
  expect(response.body).toMatchObject({ code: 'bad_request', requestId: response.headers['x-request-id'] });
  expect(response.body.error).toContain(field);
  expect(response.body).not.toHaveProperty('fields');
}

/** A client that sends `Authorization: Bearer <key>` on every request. */
function withKey(t: TestApp, key: string) {
  const http = t.http();
  return {
    get: (path: string) => http.get(path).set('Authorization', `Bearer ${key}`),
    post: (path: string) => http.post(path).set('Authorization', `Bearer ${key}`),
    put: (path: string) => http.put(path).set('Authorization', `Bearer ${key}`),
    patch: (path: string) => http.patch(path).set('Authorization', `Bearer ${key}`),
    delete: (path: string) => http.delete(path).set('Authorization', `Bearer ${key}`),
  };
}

const consoleStatic = (overrides: Record<string, unknown> = {}) => toConsoleRequest(staticClaim(overrides));

describe('custom claims (console surface)', () => {
  let t: TestApp;
  let endpoint: Server;
  let endpointUrl: string;

  beforeAll(async () => {
    t = await startTestApp();
    endpoint = createServer((_request, response) => {
      response.setHeader('content-type', 'application/json');
      response.end(JSON.stringify({ points: 7 }));
    });
    await new Promise<void>((resolve) => endpoint.listen(0, '127.0.0.1', resolve));
    endpointUrl = `http://127.0.0.1:${(endpoint.address() as AddressInfo).port}/points`;
  });
  afterAll(async () => {
    await new Promise((resolve) => endpoint.close(resolve));
    await t.close();
  });

  async function claimCount(org: TestOrg): Promise<number> {
    const [row] = await t.sql<{ n: number }>(
      `SELECT count(*)::int AS n FROM custom_claims WHERE organization_id = $1`,
      [org.id],
    );
    return row.n;
  }

  describe('claim objects', () => {
    it('creates and answers claims in snake_case, nested objects in their own schema', async () => {
      const { agent } = await orgWithMember(t, { tier: 'basic' });
      const request = toConsoleRequest(
        conditionalClaim({
          claimKey: 'risk_band',
          description: 'Risk band',
          validationRules: { allowedValues: ['high', 'low'] },
        }),
      );
      const created = await agent.post(CONSOLE_CLAIMS).send(request).expect(201);
      const rules = [
        {
          id: expect.any(String),
          operator: 'OR',
          conditions: [
            { field: 'risk_score', operator: 'greater_than_or_equal', value: '70' },
            { field: 'jailbreak_detected', operator: 'equals', value: 'true' },
          ],
          value: 'high',
          priority: 1,
        },
        {
          id: expect.any(String),
          operator: 'AND',
          conditions: [{ field: 'risk_score', operator: 'less_than', value: '30' }],
          value: 'low',
          priority: 2,
        },
      ];
      const validation = {
        required: false,
        minLength: null,
        maxLength: null,
        pattern: null,
        minValue: null,
        maxValue: null,
        allowedValues: ['high', 'low'],
        customValidation: null,
      };
      expect(created.body).toEqual({
        id: expect.any(String),
        claim_key: 'risk_band',
        claim_name: 'Claim risk_band',
        claim_type: 'conditional',
        data_type: 'string',
        description: 'Risk band',
        priority: 0,
        is_active: true,
        static_value: null,
        conditional_rules: rules,
        dynamic_expression: null,
        external_config: null,
        validation_rules: validation,
        configuration: {
          static_value: null,
          conditional_rules: rules,
          dynamic_expression: null,
          external_config: null,
          validation_rules: validation,
        },
        created_at: expect.any(String),
        updated_at: expect.any(String),
      });
      const session = await agent.get(`${CLAIMS}/${created.body.id}`).expect(200);
      expect(session.body.configuration.conditionalRules).toEqual(created.body.conditional_rules);
    });

    it('lists by priority then key and reads one claim by UUID or by claim_key (any casing)', async () => {
      const { agent } = await orgWithMember(t, { tier: 'basic' });
      await agent
        .post(CONSOLE_CLAIMS)
        .send(consoleStatic({ claimKey: 'zeta', priority: 1 }))
        .expect(201);
      const alpha = (
        await agent
          .post(CONSOLE_CLAIMS)
          .send(consoleStatic({ claimKey: 'alpha', priority: 1 }))
          .expect(201)
      ).body;
      await agent
        .post(CONSOLE_CLAIMS)
        .send(consoleStatic({ claimKey: 'first', priority: 0 }))
        .expect(201);
      const list = await agent.get(CONSOLE_CLAIMS).expect(200);
      expect(list.body.map((claim: { claim_key: string }) => claim.claim_key)).toEqual(['first', 'alpha', 'zeta']);
      expect((await agent.get(`${CONSOLE_CLAIMS}/${alpha.id}`).expect(200)).body).toEqual(alpha);
      expect((await agent.get(`${CONSOLE_CLAIMS}/alpha`).expect(200)).body).toEqual(alpha);
      expect((await agent.get(`${CONSOLE_CLAIMS}/ALPHA`).expect(200)).body.id).toBe(alpha.id);
    });

    it('answers 404 for an unknown or foreign claim, and 400 for a reference that is neither UUID nor key', async () => {
      const { agent } = await orgWithMember(t, { tier: 'basic' });
      const other = await orgWithMember(t, { tier: 'basic' });
      const foreign = (
        await other.agent
          .post(CONSOLE_CLAIMS)
          .send(consoleStatic({ claimKey: 'theirs' }))
          .expect(201)
      ).body;
      for (const ref of [randomUUID(), foreign.id, 'theirs', 'nothing_here']) {
        expect((await agent.get(`${CONSOLE_CLAIMS}/${ref}`).expect(404)).body.code).toBe('not_found');
        await agent.patch(`${CONSOLE_CLAIMS}/${ref}`).send({ claim_name: 'x' }).expect(404);
        await agent.delete(`${CONSOLE_CLAIMS}/${ref}`).expect(404);
        await agent.post(`${CONSOLE_CLAIMS}/${ref}/preview`).send({}).expect(404);
      }
      expectInvalidField(await agent.get(`${CONSOLE_CLAIMS}/not-a-key!`), 'claimRef');
    });

    it('answers 400 naming the snake_case field, 409 for a taken key, and has no bulk route', async () => {
      const { org, agent } = await orgWithMember(t, { tier: 'basic' });
      expectInvalidField(await agent.post(CONSOLE_CLAIMS).send(consoleStatic({ claimKey: '9lives' })), 'claim_key');
      const reserved = await agent.post(CONSOLE_CLAIMS).send(consoleStatic({ claimKey: 'SUBSCRIPTION' }));
      expectInvalidField(reserved, 'claim_key');
      expect(reserved.body.error).toContain('reserved');
      expectInvalidField(
        await agent.post(CONSOLE_CLAIMS).send(consoleStatic({ staticValue: undefined })),
        'static_value',
      );
      expectInvalidField(
        await agent.post(CONSOLE_CLAIMS).send(consoleStatic({ conditionalRules: conditionalClaim().conditionalRules })),
        'conditional_rules',
      );
      expectInvalidField(
        await agent
          .post(CONSOLE_CLAIMS)
          .send(toConsoleRequest(conditionalClaim({ conditionalRules: [{ operator: 'XOR' }] }))),
        'conditional_rules[0].operator',
      );
      expectInvalidField(await agent.post(CONSOLE_CLAIMS).send(staticClaim()), 'claimKey');
      await agent
        .post(CONSOLE_CLAIMS)
        .send(consoleStatic({ claimKey: 'taken' }))
        .expect(201);
      expect(
        (
          await agent
            .post(CONSOLE_CLAIMS)
            .send(consoleStatic({ claimKey: 'Taken' }))
            .expect(409)
        ).body.code,
      ).toBe('conflict');
      await agent.post(`${CONSOLE_CLAIMS}/bulk`).send([consoleStatic()]).expect(404);
      expect(await claimCount(org)).toBe(1);
    });
  });

  describe('update and delete', () => {
    it('patches by UUID or key, applying only the configuration of the claim type', async () => {
      const { agent } = await orgWithMember(t, { tier: 'basic' });
      const claim = (
        await agent
          .post(CONSOLE_CLAIMS)
          .send(consoleStatic({ claimKey: 'plan' }))
          .expect(201)
      ).body;
      const renamed = await agent
        .patch(`${CONSOLE_CLAIMS}/plan`)
        .send({
          claim_name: 'Plan',
          static_value: 'silver',
          dynamic_expression: "'ignored'",
          is_active: false,
          priority: 4,
        })
        .expect(200);
      expect(renamed.body).toMatchObject({
        id: claim.id,
        claim_name: 'Plan',
        static_value: 'silver',
        dynamic_expression: null,
        is_active: false,
        priority: 4,
      });
      const byId = await agent.patch(`${CONSOLE_CLAIMS}/${claim.id}`).send({ description: 'by id' }).expect(200);
      expect(byId.body.description).toBe('by id');
    });

    it('answers 400 for a body with no updatable field, or a changed key or type', async () => {
      const { agent } = await orgWithMember(t, { tier: 'basic' });
      await agent
        .post(CONSOLE_CLAIMS)
        .send(consoleStatic({ claimKey: 'plan' }))
        .expect(201);
      expectInvalidField(await agent.patch(`${CONSOLE_CLAIMS}/plan`).send({}), 'body');
      expectInvalidField(
        await agent.patch(`${CONSOLE_CLAIMS}/plan`).send({ claim_key: 'plan', claim_type: 'static' }),
        'body',
      );
      expectInvalidField(
        await agent.patch(`${CONSOLE_CLAIMS}/plan`).send({ dynamic_expression: "'x'" }),
        'static_value',
      );
      expectInvalidField(await agent.patch(`${CONSOLE_CLAIMS}/plan`).send({ claim_key: 'other' }), 'claim_key');
      expectInvalidField(await agent.patch(`${CONSOLE_CLAIMS}/plan`).send({ claim_type: 'dynamic' }), 'claim_type');
      expectInvalidField(await agent.patch(`${CONSOLE_CLAIMS}/plan`).send({ data_type: 'number' }), 'static_value');
      expectInvalidField(await agent.patch(`${CONSOLE_CLAIMS}/plan`).send({ claimName: 'camel' }), 'claimName');
    });

    it('deletes by key or UUID (204)', async () => {
      const { org, agent } = await orgWithMember(t, { tier: 'basic' });
      await agent
        .post(CONSOLE_CLAIMS)
        .send(consoleStatic({ claimKey: 'one' }))
        .expect(201);
      const two = (
        await agent
          .post(CONSOLE_CLAIMS)
          .send(consoleStatic({ claimKey: 'two' }))
          .expect(201)
      ).body;
      await agent.delete(`${CONSOLE_CLAIMS}/one`).expect(204);
      await agent.delete(`${CONSOLE_CLAIMS}/${two.id}`).expect(204);
      expect(await claimCount(org)).toBe(0);
      const audit = await t.sql<{ action: string }>(
        `SELECT action FROM audit_logs WHERE organization_id = $1 AND action = 'claim.deleted'`,
        [org.id],
      );
      expect(audit).toHaveLength(2);
    });

    it('reorders by claim_ids holding UUIDs or keys, skipping unknown ones (204)', async () => {
      const { agent } = await orgWithMember(t, { tier: 'basic' });
      const a = (
        await agent
          .post(CONSOLE_CLAIMS)
          .send(consoleStatic({ claimKey: 'a' }))
          .expect(201)
      ).body;
      await agent
        .post(CONSOLE_CLAIMS)
        .send(consoleStatic({ claimKey: 'b' }))
        .expect(201);
      await agent
        .put(`${CONSOLE_CLAIMS}/reorder`)
        .send({ claim_ids: ['b', 'ghost', randomUUID(), a.id] })
        .expect(204);
      const list = (await agent.get(CONSOLE_CLAIMS).expect(200)).body as { claim_key: string; priority: number }[];
      expect(list.map((claim) => [claim.claim_key, claim.priority])).toEqual([
        ['b', 0],
        ['a', 3],
      ]);
      expectInvalidField(await agent.put(`${CONSOLE_CLAIMS}/reorder`).send({ claimIds: [a.id] }), 'claimIds');
      expectInvalidField(await agent.put(`${CONSOLE_CLAIMS}/reorder`).send({ claim_ids: [1] }), 'claim_ids');
    });
  });

  describe('tier rules', () => {
    it('applies the active-claim limit and the claim types of the plan (403)', async () => {
      const { agent } = await orgWithMember(t, { tier: 'free' });
      const first = (await agent.post(CONSOLE_CLAIMS).send(consoleStatic()).expect(201)).body;
      expect((await agent.post(CONSOLE_CLAIMS).send(consoleStatic()).expect(403)).body.code).toBe(
        'claim_limit_reached',
      );
      const spare = (
        await agent
          .post(CONSOLE_CLAIMS)
          .send(consoleStatic({ isActive: false }))
          .expect(201)
      ).body;
      await agent.patch(`${CONSOLE_CLAIMS}/${spare.id}`).send({ is_active: true }).expect(403);
      await agent.patch(`${CONSOLE_CLAIMS}/${first.id}`).send({ is_active: false }).expect(200);
      await agent.patch(`${CONSOLE_CLAIMS}/${spare.id}`).send({ is_active: true }).expect(200);
      for (const request of [conditionalClaim(), dynamicClaim(), externalClaim(endpointUrl)]) {
        expect((await agent.post(CONSOLE_CLAIMS).send(toConsoleRequest(request)).expect(403)).body.code).toBe(
          'claim_type_unavailable',
        );
      }
    });

    it('creates external claims on Enterprise only', async () => {
      const pro = await orgWithMember(t, { tier: 'professional' });
      await pro.agent
        .post(CONSOLE_CLAIMS)
        .send(toConsoleRequest(externalClaim(endpointUrl)))
        .expect(403);
      const enterprise = await orgWithMember(t, { tier: 'enterprise' });
      const created = await enterprise.agent
        .post(CONSOLE_CLAIMS)
        .send(toConsoleRequest(externalClaim(endpointUrl)))
        .expect(201);
      expect(created.body.external_config).toMatchObject({
        endpoint: endpointUrl,
        authentication: { type: 'bearer', credentials: { token: '********' } },
      });
    });
  });

  describe('test and preview', () => {
    it('tests an unsaved claim against the preview device when the context is empty', async () => {
      const { org, agent } = await orgWithMember(t, { tier: 'basic' });
      const claim = toConsoleRequest(
        dynamicClaim({
          claimKey: 'who',
          dynamicExpression: "device.keyId + ':' + device.riskScore + ':' + device.attestationCount",
        }),
      );
      const response = await agent.post(`${CONSOLE_CLAIMS}/test`).send({ claim }).expect(200);
      expect(response.body).toEqual({
        claim_key: 'who',
        evaluated_value: 'preview-device:0:1',
        data_type: 'string',
        evaluation_time: expect.any(Number),
        errors: null,
      });
      expect(await claimCount(org)).toBe(0);
    });

    it('takes the device context top-level or under device_context, with additional_data', async () => {
      const { agent } = await orgWithMember(t, { tier: 'basic' });
      const claim = toConsoleRequest(
        dynamicClaim({ dynamicExpression: "device.model + '/' + device.riskScore + '/' + coalesce(data.plan, '-')" }),
      );
      const topLevel = await agent
        .post(`${CONSOLE_CLAIMS}/test`)
        .send({ claim, device_model: 'iPhone15,2', risk_score: 42, additional_data: { plan: 'pro' } })
        .expect(200);
      expect(topLevel.body.evaluated_value).toBe('iPhone15,2/42/pro');
      const nested = await agent
        .post(`${CONSOLE_CLAIMS}/test`)
        .send({ claim, device_context: { device_model: 'iPad14,1', risk_score: 5, additional_data: { plan: 'team' } } })
        .expect(200);
      expect(nested.body.evaluated_value).toBe('iPad14,1/5/team');
    });

    it('answers 400 for a missing or invalid claim, and 403 for testing external below Enterprise', async () => {
      const { agent } = await orgWithMember(t, { tier: 'professional' });
      expectInvalidField(await agent.post(`${CONSOLE_CLAIMS}/test`).send({}), 'claim');
      expectInvalidField(
        await agent
          .post(`${CONSOLE_CLAIMS}/test`)
          .send({ claim: toConsoleRequest(dynamicClaim({ dynamicExpression: '__proto__' })) }),
        'claim.dynamic_expression',
      );
      expectInvalidField(
        await agent.post(`${CONSOLE_CLAIMS}/test`).send({ claim: consoleStatic(), risk_score: 101 }),
        'risk_score',
      );
      const external = await agent
        .post(`${CONSOLE_CLAIMS}/test`)
        .send({ claim: toConsoleRequest(externalClaim(endpointUrl)) })
        .expect(403);
      expect(external.body.code).toBe('claim_type_unavailable');
      const enterprise = await orgWithMember(t, { tier: 'enterprise' });
      const tested = await enterprise.agent
        .post(`${CONSOLE_CLAIMS}/test`)
        .send({ claim: toConsoleRequest(externalClaim(endpointUrl, { claimKey: 'points' })) })
        .expect(200);
      expect(tested.body).toMatchObject({
        claim_key: 'points',
        evaluated_value: '7',
        data_type: 'number',
        errors: null,
      });
    });

    it('previews a saved claim by key with the defaulted device context', async () => {
      const { agent } = await orgWithMember(t, { tier: 'basic' });
      await agent
        .post(CONSOLE_CLAIMS)
        .send(toConsoleRequest(conditionalClaim({ claimKey: 'band' })))
        .expect(201);
      expect((await agent.post(`${CONSOLE_CLAIMS}/band/preview`).send({}).expect(200)).body).toMatchObject({
        claim_key: 'band',
        evaluated_value: 'low',
        errors: null,
      });
      expect(
        (await agent.post(`${CONSOLE_CLAIMS}/band/preview`).send({ jailbreak_detected: true }).expect(200)).body
          .evaluated_value,
      ).toBe('high');
      const midRisk = await agent.post(`${CONSOLE_CLAIMS}/band/preview`).send({ risk_score: 50 }).expect(200);
      expect(midRisk.body).toMatchObject({ evaluated_value: null, errors: null });
    });
  });

  describe('access', () => {
    it('needs a session or an API key (401)', async () => {
      const { org } = await orgWithMember(t, { tier: 'basic' });
      await t.http().get(CONSOLE_CLAIMS).expect(401);
      await t.http().post(CONSOLE_CLAIMS).send(consoleStatic()).expect(401);
      await t.http().post(`${CONSOLE_CLAIMS}/test`).send({ claim: consoleStatic() }).expect(401);
      const revoked = await createApiKey(t, org, [], { type: 'gpat', revoked: true });
      await withKey(t, revoked).get(CONSOLE_CLAIMS).expect(401);
      await withKey(t, `gpat_${'x'.repeat(40)}`)
        .get(CONSOLE_CLAIMS)
        .expect(401);
    });

    it('accepts gpat_ and aat_ keys with claims:read and claims:write for every operation and refuses other keys (403)', async () => {
      const { org, user, agent } = await orgWithMember(t, { tier: 'basic' });
      for (const type of ['gpat', 'aat']) {
        // A personal key acts as its user (here the organization's Owner).
        const client = withKey(
          t,
          await createApiKey(t, org, ['claims:read', 'claims:write'], { type, createdBy: user.id }),
        );
        const key = `${type}_claim`;
        const created = await client
          .post(CONSOLE_CLAIMS)
          .send(consoleStatic({ claimKey: key }))
          .expect(201);
        expect(
          (await client.get(CONSOLE_CLAIMS).expect(200)).body.map((claim: { claim_key: string }) => claim.claim_key),
        ).toContain(key);
        await client.get(`${CONSOLE_CLAIMS}/${key}`).expect(200);
        await client.patch(`${CONSOLE_CLAIMS}/${key}`).send({ claim_name: 'via key' }).expect(200);
        await client.post(`${CONSOLE_CLAIMS}/${key}/preview`).send({}).expect(200);
        await client.post(`${CONSOLE_CLAIMS}/test`).send({ claim: consoleStatic() }).expect(200);
        await client
          .put(`${CONSOLE_CLAIMS}/reorder`)
          .send({ claim_ids: [created.body.id] })
          .expect(204);
        await client.delete(`${CONSOLE_CLAIMS}/${key}`).expect(204);
      }
      await agent
        .post(CONSOLE_CLAIMS)
        .send(consoleStatic({ claimKey: 'kept' }))
        .expect(201);
      const service = withKey(t, await createApiKey(t, org, ['org:read'], { type: 'service' }));
      expect((await service.get(CONSOLE_CLAIMS).expect(403)).body.code).toBe('forbidden');
      await service.post(CONSOLE_CLAIMS).send(consoleStatic()).expect(403);
      await service.get(`${CONSOLE_CLAIMS}/kept`).expect(403);
    });

    it('refuses keys without the claims scopes: a release-notes or feedback key changes no claim', async () => {
      const { org, user, agent } = await orgWithMember(t, { tier: 'basic' });
      await agent
        .post(CONSOLE_CLAIMS)
        .send(consoleStatic({ claimKey: 'guarded' }))
        .expect(201);
      for (const [type, scopes] of [
        ['aat', ['release_notes:read']],
        ['aat', ['feedback:read']],
        ['gpat', ['org:read']],
        ['aat', ['claims:read']],
      ] as const) {
        const client = withKey(t, await createApiKey(t, org, [...scopes], { type, createdBy: user.id }));
        const label = `${type} [${scopes.join()}]`;
        const created = await client.post(CONSOLE_CLAIMS).send(consoleStatic({ claimKey: 'sneaky' }));
        expect([label, created.status, created.body.error]).toEqual([
          label,
          403,
          'The API key lacks the scope claims:write',
        ]);
        expect([label, (await client.patch(`${CONSOLE_CLAIMS}/guarded`).send({ claim_name: 'x' })).status]).toEqual([
          label,
          403,
        ]);
        expect([label, (await client.delete(`${CONSOLE_CLAIMS}/guarded`)).status]).toEqual([label, 403]);
      }
      const keys = (await agent.get(CONSOLE_CLAIMS).expect(200)).body.map(
        (claim: { claim_key: string }) => claim.claim_key,
      );
      expect(keys).toEqual(['guarded']);
    });

    it("sees only the key's own organization", async () => {
      const { agent } = await orgWithMember(t, { tier: 'basic' });
      const claim = (
        await agent
          .post(CONSOLE_CLAIMS)
          .send(consoleStatic({ claimKey: 'mine' }))
          .expect(201)
      ).body;
      const other = await orgWithMember(t, { tier: 'basic' });
      const client = withKey(t, await createApiKey(t, other.org, ['claims:read', 'claims:write'], { type: 'aat' }));
      expect((await client.get(CONSOLE_CLAIMS).expect(200)).body).toEqual([]);
      await client.get(`${CONSOLE_CLAIMS}/${claim.id}`).expect(404);
      await client.get(`${CONSOLE_CLAIMS}/mine`).expect(404);
      await client.delete(`${CONSOLE_CLAIMS}/${claim.id}`).expect(404);
    });

    it("lets any member read and only Admins write; a gpat_ key acts with its user's role", async () => {
      const { org, agent } = await orgWithMember(t, { tier: 'basic' });
      await agent
        .post(CONSOLE_CLAIMS)
        .send(consoleStatic({ claimKey: 'plan' }))
        .expect(201);
      const viewer = await createUser(t, { org, role: 'viewer' });
      const viewerSession: HttpClient = await signIn(t, viewer.email);
      await viewerSession.get(CONSOLE_CLAIMS).expect(200);
      await viewerSession.post(`${CONSOLE_CLAIMS}/plan/preview`).send({}).expect(200);
      await viewerSession.post(`${CONSOLE_CLAIMS}/test`).send({ claim: consoleStatic() }).expect(200);
      await viewerSession.post(CONSOLE_CLAIMS).send(consoleStatic()).expect(403);
      await viewerSession.patch(`${CONSOLE_CLAIMS}/plan`).send({ claim_name: 'x' }).expect(403);
      await viewerSession.delete(`${CONSOLE_CLAIMS}/plan`).expect(403);
      await viewerSession.put(`${CONSOLE_CLAIMS}/reorder`).send({ claim_ids: [] }).expect(403);

      const viewerKey = withKey(
        t,
        await createApiKey(t, org, ['claims:read', 'claims:write'], { type: 'gpat', createdBy: viewer.id }),
      );
      await viewerKey.get(`${CONSOLE_CLAIMS}/plan`).expect(200);
      expect((await viewerKey.patch(`${CONSOLE_CLAIMS}/plan`).send({ claim_name: 'x' }).expect(403)).body.code).toBe(
        'forbidden',
      );
      await viewerKey.delete(`${CONSOLE_CLAIMS}/plan`).expect(403);

      const admin = await createUser(t, { org, role: 'admin' });
      const adminKey = withKey(
        t,
        await createApiKey(t, org, ['claims:read', 'claims:write'], { type: 'gpat', createdBy: admin.id }),
      );
      await adminKey.patch(`${CONSOLE_CLAIMS}/plan`).send({ claim_name: 'by admin key' }).expect(200);
      await t.sql(`DELETE FROM memberships WHERE user_id = $1`, [admin.id]);
      // No longer a member: the personal key acts for nobody in this organization.
      await adminKey.get(CONSOLE_CLAIMS).expect(401);
    });

    it('shares one model with the session surface', async () => {
      const { agent } = await orgWithMember(t, { tier: 'basic' });
      const session = await createClaim(agent, staticClaim({ claimKey: 'shared' }));
      const consoleView = (await agent.get(`${CONSOLE_CLAIMS}/shared`).expect(200)).body;
      expect(consoleView).toMatchObject({ id: session.id, claim_key: 'shared', static_value: 'gold' });
      await agent.patch(`${CONSOLE_CLAIMS}/shared`).send({ static_value: 'bronze' }).expect(200);
      expect((await agent.get(`${CLAIMS}/${session.id}`).expect(200)).body.configuration.staticValue).toBe('bronze');
    });
  });
});
