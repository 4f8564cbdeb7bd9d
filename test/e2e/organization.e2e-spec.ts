import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { AccountDeletionJob } from '../../src/organizations/account-deletion.job.js';
import {
  PASSWORD,
  createApiKey,
  createOrg,
  createUser,
  orgWithMember,
  randomClientIp,
  signIn,
  uniqueEmail,
} from '../factories/identity.js';
import { createAppRow, rowsOfOrganization, setTier, tenantTables } from '../factories/organization.js';
import { startTestApp, type TestApp } from '../harness/test-app.js';

const SETTINGS = '/api/v1/org/settings';
const PREFERENCES = '/api/v1/org/notification-preferences';
const BILLING = '/api/v1/org/billing';
const PORTAL = '/api/v1/org/billing/portal-session';
const AUDIT = '/api/v1/org/audit-log';
const QUICKSTART = '/api/v1/org/quickstart-snippet';

const DEFAULT_PREFERENCES = {
  newFeatureRequest: true,
  featureVoteThreshold: true,
  featureVoteThresholdCount: 10,
  featureStatusChange: true,
  newSupportTicket: true,
  ticketAdminReply: true,
  ticketResolved: true,
  ticketUserReply: true,
  flagToggle: true,
  teamInvite: true,
  usageAlert: true,
};

describe('organization administration', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  describe('settings', () => {
    it('shows any member the settings with display and raw tier', async () => {
      const org = await createOrg(t, { name: 'Settings Co', tier: 'professional' });
      const viewer = await createUser(t, { org, role: 'viewer' });
      const agent = await signIn(t, viewer.email);
      const response = await agent.get(SETTINGS).expect(200);
      expect(response.body).toEqual({
        id: org.id,
        name: 'Settings Co',
        slug: org.slug,
        serviceTier: 'Business',
        serviceTierRawValue: 'professional',
        billingEmail: null,
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
      });
      await setTier(t, org, 'growth');
      expect((await agent.get(SETTINGS).expect(200)).body).toMatchObject({
        serviceTier: 'Growth',
        serviceTierRawValue: 'growth',
      });
    });

    it('renames for an Admin, regenerating a unique slug from the name, and audits', async () => {
      const taken = await createOrg(t);
      await t.sql(`UPDATE organizations SET slug = 'renamed-inc' WHERE id = $1`, [taken.id]);
      const { org, agent } = await orgWithMember(t, { role: 'admin' });
      const response = await agent.put(SETTINGS).send({ name: '  Renamed, Inc.  ' }).expect(200);
      expect(response.body).toMatchObject({ id: org.id, name: 'Renamed, Inc.', slug: 'renamed-inc-2' });
      expect(new Date(response.body.updatedAt).getTime()).toBeGreaterThan(Date.now() - 60_000);
      const [audit] = await t.sql(
        `SELECT actor_email, metadata FROM audit_logs WHERE organization_id = $1 AND action = 'org.settings_updated'`,
        [org.id],
      );
      expect(audit.metadata).toEqual({
        name: { from: org.name, to: 'Renamed, Inc.' },
        slug: { from: org.slug, to: 'renamed-inc-2' },
      });
      // The same name again changes nothing.
      await agent.put(SETTINGS).send({ name: 'Renamed, Inc.' }).expect(200);
      const audits = await t.sql(
        `SELECT 1 FROM audit_logs WHERE organization_id = $1 AND action = 'org.settings_updated'`,
        [org.id],
      );
      expect(audits).toHaveLength(1);
    });

    it('refuses a member (403), other fields and an empty name (422), and API keys (401)', async () => {
      const org = await createOrg(t);
      const member = await createUser(t, { org, role: 'member' });
      await (await signIn(t, member.email)).put(SETTINGS).send({ name: 'Nope' }).expect(403);
      const admin = await createUser(t, { org, role: 'admin' });
      const agent = await signIn(t, admin.email);
      const invalid = await agent.put(SETTINGS).send({ name: '', slug: 'mine' }).expect(422);
      expect(invalid.body.fields.map((f: { field: string }) => f.field).sort()).toEqual(['name', 'slug']);
      const key = await createApiKey(t, org, ['org:read']);
      await t.http().get(SETTINGS).set('Authorization', `Bearer ${key}`).expect(401);
    });
  });

  describe('notification preferences', () => {
    it('starts with every notification on and a vote threshold of 10', async () => {
      const org = await createOrg(t);
      const viewer = await createUser(t, { org, role: 'viewer' });
      const response = await (await signIn(t, viewer.email)).get(PREFERENCES).expect(200);
      expect(response.body).toEqual(DEFAULT_PREFERENCES);
    });

    it('applies a partial PATCH, answers the full preferences, keeps them and audits the change', async () => {
      const { org, agent } = await orgWithMember(t, { role: 'admin' });
      const patched = await agent
        .patch(PREFERENCES)
        .send({ flagToggle: false, featureVoteThresholdCount: 250 })
        .expect(200);
      expect(patched.body).toEqual({ ...DEFAULT_PREFERENCES, flagToggle: false, featureVoteThresholdCount: 250 });
      const second = await agent.patch(PREFERENCES).send({ usageAlert: false }).expect(200);
      expect(second.body).toEqual({
        ...DEFAULT_PREFERENCES,
        flagToggle: false,
        featureVoteThresholdCount: 250,
        usageAlert: false,
      });
      expect((await agent.get(PREFERENCES).expect(200)).body).toEqual(second.body);
      expect((await agent.patch(PREFERENCES).send({}).expect(200)).body).toEqual(second.body);
      const audits = await t.sql<{ metadata: unknown }>(
        `SELECT metadata FROM audit_logs WHERE organization_id = $1 AND action = 'notification_preferences.updated' ORDER BY created_at`,
        [org.id],
      );
      expect(audits.map((a) => a.metadata)).toEqual([
        { changes: { flagToggle: { from: true, to: false }, featureVoteThresholdCount: { from: 10, to: 250 } } },
        { changes: { usageAlert: { from: true, to: false } } },
      ]);
    });

    it.each([0, 10_001, 2.5, '10'])('refuses a vote threshold of %p with 422 naming the field', async (value) => {
      const { agent } = await orgWithMember(t, { role: 'admin' });
      const response = await agent.patch(PREFERENCES).send({ featureVoteThresholdCount: value }).expect(422);
      expect(response.body.fields).toEqual([{ field: 'featureVoteThresholdCount', message: expect.any(String) }]);
    });

    it('accepts the threshold bounds 1 and 10,000, refuses non-booleans and unknown fields, and members', async () => {
      const { org, agent } = await orgWithMember(t, { role: 'admin' });
      await agent.patch(PREFERENCES).send({ featureVoteThresholdCount: 1 }).expect(200);
      await agent.patch(PREFERENCES).send({ featureVoteThresholdCount: 10_000 }).expect(200);
      const invalid = await agent.patch(PREFERENCES).send({ teamInvite: 'yes', pager: true }).expect(422);
      expect(invalid.body.fields.map((f: { field: string }) => f.field).sort()).toEqual(['pager', 'teamInvite']);
      const member = await createUser(t, { org, role: 'member' });
      await (await signIn(t, member.email)).patch(PREFERENCES).send({ teamInvite: false }).expect(403);
    });
  });

  describe('billing summary and portal', () => {
    it('summarises a Free organization: MAD this calendar month from the counter, 0 without one', async () => {
      const { org, agent } = await orgWithMember(t, { role: 'admin' });
      expect((await agent.get(BILLING).expect(200)).body).toEqual({
        plan: 'Free',
        planRawValue: 'free',
        madUsed: 0,
        madLimit: 1000,
        currentPeriodEnd: null,
        providerCustomerId: null,
        providerSubscriptionId: null,
      });
      await t.sql(
        `INSERT INTO mad_counters (organization_id, period_start, active_devices) VALUES
           ($1, date_trunc('month', now() AT TIME ZONE 'utc')::date, 42),
           ($1, (date_trunc('month', now() AT TIME ZONE 'utc') - interval '1 month')::date, 900)`,
        [org.id],
      );
      expect((await agent.get(BILLING).expect(200)).body.madUsed).toBe(42);
    });

    it('shows the provider ids, the period end and an unlimited Enterprise MAD limit', async () => {
      const { org, agent } = await orgWithMember(t, { tier: 'enterprise', role: 'admin' });
      const periodEnd = new Date(Date.now() + 20 * 86_400_000);
      await t.sql(
        `UPDATE organizations SET provider_customer_id = 'cus_123', provider_subscription_id = 'sub_456', current_period_end = $2 WHERE id = $1`,
        [org.id, periodEnd],
      );
      expect((await agent.get(BILLING).expect(200)).body).toEqual({
        plan: 'Enterprise',
        planRawValue: 'enterprise',
        madUsed: 0,
        madLimit: null,
        currentPeriodEnd: periodEnd.toISOString(),
        providerCustomerId: 'cus_123',
        providerSubscriptionId: 'sub_456',
      });
    });

    it('is for Admins only', async () => {
      const org = await createOrg(t);
      const member = await createUser(t, { org, role: 'member' });
      const agent = await signIn(t, member.email);
      await agent.get(BILLING).expect(403);
      await agent.post(PORTAL).expect(403);
    });

    it('answers 402 for a portal session of an organization that never upgraded', async () => {
      const { agent } = await orgWithMember(t, { role: 'admin' });
      const response = await agent.post(PORTAL).expect(402);
      expect(response.body).toMatchObject({ code: 'payment_required', hint: expect.any(String) });
    });

    it('answers 503 for a portal session when the billing provider is not configured', async () => {
      const { org, agent } = await orgWithMember(t, { tier: 'basic', role: 'admin' });
      await t.sql(`UPDATE organizations SET provider_customer_id = 'cus_789' WHERE id = $1`, [org.id]);
      expect((await agent.post(PORTAL).expect(503)).body.code).toBe('service_unavailable');
    });
  });

  describe('audit log', () => {
    async function orgWithEntries(count: number) {
      const member = await orgWithMember(t, { role: 'admin' });
      // Only the entries made here (signing in wrote one).
      await t.sql(`DELETE FROM audit_logs WHERE organization_id = $1`, [member.org.id]);
      await t.sql(
        `INSERT INTO audit_logs (organization_id, actor_email, action, resource_type, resource_id, metadata, ip_address, created_at)
         SELECT $1, 'actor@example.com', 'test.entry_' || n, 'test', n::text, jsonb_build_object('n', n), '10.0.0.1',
                now() - interval '1 hour' + n * interval '1 second'
           FROM generate_series(1, $2) AS n`,
        [member.org.id, count],
      );
      return member;
    }

    it('pages newest first, 50 by default, with items and metadata', async () => {
      const { agent } = await orgWithEntries(120);
      const first = await agent.get(AUDIT).expect(200);
      expect(first.body.metadata).toEqual({ page: 1, per: 50, total: 120 });
      expect(first.body.items).toHaveLength(50);
      expect(first.body.items[0]).toEqual({
        id: expect.any(String),
        actorEmail: 'actor@example.com',
        action: 'test.entry_120',
        resourceType: 'test',
        resourceId: '120',
        metadata: { n: 120 },
        ipAddress: '10.0.0.1',
        createdAt: expect.any(String),
      });
      const times = first.body.items.map((i: { createdAt: string }) => Date.parse(i.createdAt));
      expect([...times].sort((a, b) => b - a)).toEqual(times);

      const third = await agent.get(`${AUDIT}?page=3&per=50`).expect(200);
      expect(third.body.items.map((i: { action: string }) => i.action)).toEqual(
        Array.from({ length: 20 }, (_, i) => `test.entry_${20 - i}`),
      );
      const max = await agent.get(`${AUDIT}?per=100`).expect(200);
      expect(max.body.items).toHaveLength(100);
      expect((await agent.get(`${AUDIT}?page=9`).expect(200)).body.items).toEqual([]);
    });

    it.each([
      ['per=101', 'per'],
      ['per=0', 'per'],
      ['page=0', 'page'],
      ['page=abc', 'page'],
      ['per=2.5', 'per'],
    ])('refuses %s naming the field', async (query, field) => {
      const { agent } = await orgWithMember(t, { role: 'admin' });
      const response = await agent.get(`${AUDIT}?${query}`).expect(422);
      expect(response.body.fields.map((f: { field: string }) => f.field)).toEqual([field]);
    });

    it('records administrative changes with the actor, for Admins only, and never another organization', async () => {
      const { org, user, agent } = await orgWithMember(t, { tier: 'basic', role: 'admin' });
      await agent.post('/api/v1/org/invites').send({ email: uniqueEmail(), role: 'member' }).expect(200);
      await agent
        .put(SETTINGS)
        .send({ name: `Audited ${org.id.slice(0, 4)}` })
        .expect(200);
      const other = await orgWithEntries(3);
      const log = await agent.get(AUDIT).expect(200);
      const actions = log.body.items.map((i: { action: string }) => i.action);
      expect(actions.slice(0, 2)).toEqual(['org.settings_updated', 'invite.created']);
      expect(log.body.items[0].actorEmail).toBe(user.email);
      expect(actions).not.toContain('test.entry_1');
      expect((await other.agent.get(AUDIT).expect(200)).body.metadata.total).toBe(3);

      const member = await createUser(t, { org, role: 'member' });
      await (await signIn(t, member.email)).get(AUDIT).expect(403);
    });
  });

  describe('quick start snippet', () => {
    it('answers 404 while the organization has no app', async () => {
      const { agent } = await orgWithMember(t, { role: 'viewer' });
      expect((await agent.get(QUICKSTART).expect(404)).body.code).toBe('not_found');
    });

    it('initialises the SDK for the primary app', async () => {
      const { org, agent } = await orgWithMember(t, { role: 'viewer' });
      await createAppRow(t, org, { name: 'Older', createdAt: new Date(Date.now() - 86_400_000) });
      const primary = await createAppRow(t, org, {
        name: 'Weather "Pro"',
        bundleId: 'com.acme.weather',
        teamId: 'ABCDE12345',
        primary: true,
      });
      const response = await agent.get(QUICKSTART).expect(200);
      expect(response.body).toEqual({
        appId: primary.id,
        appName: 'Weather "Pro"',
        teamId: 'ABCDE12345',
        bundleId: 'com.acme.weather',
        swiftSnippet: expect.any(String),
      });
      const snippet: string = response.body.swiftSnippet;
      expect(snippet).toContain('import Attestly');
      expect(snippet).toContain('struct WeatherProApp: App {');
      expect(snippet).toContain(
        [
          '        Attestly.configure(',
          `            baseURL: URL(string: "${t.config.baseUrl}")!,`,
          '            bundleID: "com.acme.weather",',
          '            teamID: "ABCDE12345"',
          '        )',
        ].join('\n'),
      );
      // Balanced braces and parentheses: the snippet compiles as pasted.
      for (const [open, close] of [
        ['{', '}'],
        ['(', ')'],
      ]) {
        expect(snippet.split(open).length).toBe(snippet.split(close).length);
      }
    });
  });

  describe('deleting the organization (Organization state table)', () => {
    it('is for the Owner only', async () => {
      const org = await createOrg(t);
      const admin = await createUser(t, { org, role: 'admin' });
      await (await signIn(t, admin.email)).delete('/api/v1/org').expect(403);
      expect(await t.sql(`SELECT 1 FROM organizations WHERE id = $1`, [org.id])).toHaveLength(1);
    });

    it('exists → deleted: removes every row of the organization, deactivates its own members and ends sessions', async () => {
      const org = await createOrg(t, { tier: 'enterprise' });
      const owner = await createUser(t, { org, role: 'owner' });
      const loner = await createUser(t, { org, role: 'member' });
      const elsewhere = await createOrg(t);
      const shared = await createUser(t, { org, role: 'admin' });
      await t.sql(`INSERT INTO memberships (organization_id, user_id, role) VALUES ($1, $2, 'viewer')`, [
        elsewhere.id,
        shared.id,
      ]);
      const bystander = await createUser(t, { org: elsewhere, role: 'owner' });
      // A service administrator who is a member of only this organization keeps the account.
      const operator = await createUser(t, { org, role: 'viewer' });
      await t.sql(`UPDATE users SET is_super_admin = true WHERE id = $1`, [operator.id]);

      const ownerAgent = await signIn(t, owner.email);
      const lonerAgent = await signIn(t, loner.email);
      const sharedAgent = await signIn(t, shared.email);
      // Data in as many tenant tables as this issue can create through the API or plainly.
      await ownerAgent.post('/api/v1/org/invites').send({ email: uniqueEmail(), role: 'member' }).expect(200);
      await ownerAgent.patch(PREFERENCES).send({ usageAlert: false }).expect(200);
      await ownerAgent
        .put(SETTINGS)
        .send({ name: `Doomed ${org.id.slice(0, 6)}` })
        .expect(200);
      await createApiKey(t, org, ['org:read']);
      const app = await createAppRow(t, org, { primary: true });
      await t.sql(
        `INSERT INTO mad_counters (organization_id, period_start, active_devices) VALUES ($1, date_trunc('month', now())::date, 3)`,
        [org.id],
      );
      await t.sql(
        `INSERT INTO billing_events (event_id, event_type, organization_id, event_created_at, outcome)
         VALUES ($1, 'customer.subscription.updated', $2, now(), 'applied')`,
        [`evt_doomed_${org.id}`, org.id],
      );
      const before = await rowsOfOrganization(t, org.id);
      expect(Object.keys(before)).toEqual(
        expect.arrayContaining([
          'apps',
          'audit_logs',
          'api_keys',
          'invites',
          'memberships',
          'notification_preferences',
          'mad_counters',
          'billing_events',
        ]),
      );
      const elsewhereBefore = await rowsOfOrganization(t, elsewhere.id);

      await ownerAgent.delete('/api/v1/org').expect(204);

      expect(await tenantTables(t)).toEqual(expect.arrayContaining(['apps', 'memberships', 'invites', 'audit_logs']));
      expect(await rowsOfOrganization(t, org.id)).toEqual({});
      expect(await t.sql(`SELECT 1 FROM organizations WHERE id = $1`, [org.id])).toHaveLength(0);
      const appTables = await t.sql<{ table_name: string }>(
        `SELECT table_name FROM information_schema.columns WHERE table_schema = 'public' AND column_name = 'app_id'`,
      );
      for (const { table_name } of appTables) {
        expect(await t.sql(`SELECT 1 FROM "${table_name}" WHERE app_id = $1`, [app.id])).toHaveLength(0);
      }
      expect(await rowsOfOrganization(t, elsewhere.id)).toEqual(elsewhereBefore);

      const statuses = await t.sql<{ id: string; status: string }>(
        `SELECT id, status FROM users WHERE id = ANY($1::uuid[])`,
        [[owner.id, loner.id, shared.id, bystander.id, operator.id]],
      );
      expect(Object.fromEntries(statuses.map((s) => [s.id, s.status]))).toEqual({
        [operator.id]: 'active',
        [owner.id]: 'disabled',
        [loner.id]: 'disabled',
        [shared.id]: 'active',
        [bystander.id]: 'active',
      });
      await ownerAgent.get('/api/v1/auth/me').expect(401);
      await lonerAgent.get('/api/v1/auth/me').expect(401);
      const sharedMe = await sharedAgent.get('/api/v1/auth/me').expect(200);
      expect(sharedMe.body.organization).toBeNull();
      const login = await t
        .http()
        .post('/api/v1/auth/login')
        .set('X-Forwarded-For', randomClientIp())
        .send({ email: loner.email, password: PASSWORD })
        .expect(403);
      expect(login.body.code).toBe('account_disabled');
    });
  });

  describe('deleting one’s account (User account state table)', () => {
    it('answers 409 while the organization has other members, and 403 to a non-Owner', async () => {
      const { org, user, agent } = await orgWithMember(t, { tier: 'basic' });
      const member = await createUser(t, { org, role: 'member' });
      const response = await agent.delete('/api/v1/account').expect(409);
      expect(response.body.code).toBe('conflict');
      await (await signIn(t, member.email)).delete('/api/v1/account').expect(403);
      const [row] = await t.sql(`SELECT status FROM users WHERE id = $1`, [user.id]);
      expect(row).toEqual({ status: 'active' });
    });

    it('answers 409 while the account is the last Owner of another organization with members', async () => {
      const { user, agent } = await orgWithMember(t);
      const other = await createOrg(t);
      await t.sql(
        `INSERT INTO memberships (organization_id, user_id, role, created_at) VALUES ($1, $2, 'owner', now() + interval '1 second')`,
        [other.id, user.id],
      );
      await createUser(t, { org: other, role: 'member' });
      const response = await agent.delete('/api/v1/account').expect(409);
      expect(response.body.error).toMatch(/only Owner/);
    });

    it('active → pending deletion: signed out everywhere, cannot sign in, subscription cleared', async () => {
      const { org, user, agent } = await orgWithMember(t, { tier: 'basic' });
      const secondBrowser = await signIn(t, user.email);
      await t.sql(
        `UPDATE organizations SET provider_customer_id = 'cus_acc', provider_subscription_id = 'sub_acc', current_period_end = now() + interval '10 days' WHERE id = $1`,
        [org.id],
      );
      const pending = await agent
        .post('/api/v1/org/invites')
        .send({ email: uniqueEmail(), role: 'member' })
        .expect(200);

      await agent.delete('/api/v1/account').expect(204);

      const [account] = await t.sql<{ status: string; deletion_requested_at: Date | null }>(
        `SELECT status, deletion_requested_at FROM users WHERE id = $1`,
        [user.id],
      );
      expect(account.status).toBe('pending_deletion');
      expect(Date.now() - account.deletion_requested_at!.getTime()).toBeLessThan(60_000);
      expect(await t.sql(`SELECT 1 FROM sessions WHERE user_id = $1`, [user.id])).toHaveLength(0);
      await agent.get('/api/v1/auth/me').expect(401);
      await secondBrowser.get('/api/v1/auth/me').expect(401);
      const login = await t
        .http()
        .post('/api/v1/auth/login')
        .set('X-Forwarded-For', randomClientIp())
        .send({ email: user.email, password: PASSWORD })
        .expect(403);
      expect(login.body.code).toBe('account_disabled');

      const [organization] = await t.sql(
        `SELECT service_tier, provider_customer_id, provider_subscription_id, current_period_end FROM organizations WHERE id = $1`,
        [org.id],
      );
      expect(organization).toEqual({
        service_tier: 'free',
        provider_customer_id: 'cus_acc',
        provider_subscription_id: null,
        current_period_end: null,
      });
      const [invite] = await t.sql(`SELECT status FROM invites WHERE id = $1`, [pending.body.id]);
      expect(invite).toEqual({ status: 'revoked' });
      const actions = await t.sql<{ action: string }>(`SELECT action FROM audit_logs WHERE organization_id = $1`, [
        org.id,
      ]);
      expect(actions.map((a) => a.action)).toEqual(
        expect.arrayContaining(['account.deletion_requested', 'billing.subscription_cancelled']),
      );
    });

    it('pending deletion → deleted by the job 30 days later, with the organizations only it belonged to', async () => {
      const { org, user, agent } = await orgWithMember(t);
      // A second organization the user shares with someone else: it stays, without the user.
      const shared = await createOrg(t);
      await t.sql(
        `INSERT INTO memberships (organization_id, user_id, role, created_at) VALUES ($1, $2, 'member', now() + interval '1 second')`,
        [shared.id, user.id],
      );
      const colleague = await createUser(t, { org: shared, role: 'owner' });
      await agent.delete('/api/v1/account').expect(204);
      const job = t.app.get(AccountDeletionJob);

      await t.sql(`UPDATE users SET deletion_requested_at = now() - interval '29 days' WHERE id = $1`, [user.id]);
      await job.run();
      expect(await t.sql(`SELECT 1 FROM users WHERE id = $1`, [user.id])).toHaveLength(1);

      await t.sql(`UPDATE users SET deletion_requested_at = now() - interval '30 days 1 minute' WHERE id = $1`, [
        user.id,
      ]);
      expect(await job.run()).toBeGreaterThanOrEqual(1);
      expect(await t.sql(`SELECT 1 FROM users WHERE id = $1`, [user.id])).toHaveLength(0);
      expect(await t.sql(`SELECT 1 FROM organizations WHERE id = $1`, [org.id])).toHaveLength(0);
      expect(await rowsOfOrganization(t, org.id)).toEqual({});
      expect(await t.sql(`SELECT 1 FROM organizations WHERE id = $1`, [shared.id])).toHaveLength(1);
      expect(await t.sql(`SELECT user_id FROM memberships WHERE organization_id = $1`, [shared.id])).toEqual([
        { user_id: colleague.id },
      ]);
      expect(await job.run()).toBe(0);
    });

    it('skips its round while another instance holds the job lock', async () => {
      const runner = t.dataSource.createQueryRunner();
      await runner.connect();
      try {
        await runner.query('SELECT pg_advisory_lock(727102)');
        expect(await t.app.get(AccountDeletionJob).run()).toBeNull();
      } finally {
        await runner.query('SELECT pg_advisory_unlock(727102)');
        await runner.release();
      }
    });
  });
});
