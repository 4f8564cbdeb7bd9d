import { generateKeyPairSync } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { decodeProtectedHeader, decodeJwt } from 'jose';
import { createUser, signIn } from '../factories/identity.js';
import { startTestApp, type TestApp } from '../harness/test-app.js';
import { startApnsServer, type ApnsServer } from '../support/apns-server.js';
import {
  attestDevice,
  fabricatedRootEnv,
  registerApp,
  sdk,
  TEAM_ID,
  type RegisteredApp,
} from '../support/sdk-client.js';
import { eventually } from '../support/webhook-receiver.js';

const KEY_ID = 'ABC123DEFG';
const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
const P8 = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
const apns: ApnsServer = await startApnsServer({ publicKey, keyId: KEY_ID, teamId: TEAM_ID });
const t: TestApp = await startTestApp({ ...(await fabricatedRootEnv()), APNS_URL: apns.url });

afterAll(async () => {
  await t.close();
  await apns.close();
});

let tokenSequence = 0;
/** A fresh APNs device token (32 bytes, hex). */
const deviceTokenHex = () => (++tokenSequence).toString(16).padStart(64, 'a');

const credentialsOf = (app: RegisteredApp) => `/api/v1/apps/${app.id}/push-credentials`;

async function withCredentials(app: RegisteredApp) {
  await app.owner
    .put(credentialsOf(app))
    .send({ keyId: KEY_ID, teamId: TEAM_ID, privateKey: P8, environment: 'sandbox' })
    .expect(200);
}

/** An attested device of the app registering its APNs token for `subscriberId`. */
async function registerDevice(app: RegisteredApp, subscriberId: string): Promise<string> {
  const { token } = await attestDevice(t, app);
  const pushToken = deviceTokenHex();
  await sdk(t, app)
    .post('/api/v1/push/tokens')
    .set('Authorization', `Bearer ${token}`)
    .send({ pushToken, subscriberId })
    .expect(201);
  return pushToken;
}

async function deliveries(appId: string) {
  return t.sql<{ device_token: string; status: string; attempts: number; last_status: number | null }>(
    `SELECT device_token, status, attempts, last_status FROM push_deliveries WHERE app_id = $1 ORDER BY created_at`,
    [appId],
  );
}

/** Waits until no push of the app is pending (the dispatcher sweeps every second). */
async function settled(appId: string) {
  await eventually(async () => (await deliveries(appId)).every((push) => push.status !== 'pending'));
}

const pushesTo = (deviceToken: string) => apns.received.filter((push) => push.deviceToken === deviceToken);

describe('APNs credentials', () => {
  let app: RegisteredApp;
  beforeAll(async () => {
    app = await registerApp(t, 'professional');
  });

  it('stores the .p8 key encrypted, never shows it, and audits the change', async () => {
    const saved = await app.owner
      .put(credentialsOf(app))
      .send({ keyId: KEY_ID, teamId: TEAM_ID, privateKey: P8, environment: 'production' })
      .expect(200);
    expect(saved.body).toEqual({
      keyId: KEY_ID,
      teamId: TEAM_ID,
      environment: 'production',
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    expect((await app.owner.get(credentialsOf(app)).expect(200)).body).toEqual(saved.body);
    const [row] = await t.sql<{ private_key_encrypted: string }>(
      `SELECT private_key_encrypted FROM push_credentials WHERE app_id = $1`,
      [app.id],
    );
    const keyBody = P8.split('\n')[1];
    expect(row.private_key_encrypted).not.toContain('PRIVATE KEY');
    expect(row.private_key_encrypted).not.toContain(keyBody.slice(0, 20));
    const audit = await app.owner.get('/api/v1/org/audit-log').expect(200);
    expect(audit.body.items).toContainEqual(expect.objectContaining({ action: 'push_credentials.updated' }));
    await app.owner.delete(credentialsOf(app)).expect(204);
    await app.owner.get(credentialsOf(app)).expect(404);
  });

  it('refuses a key that is not an APNs .p8 key, other roles and other organizations', async () => {
    const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' });
    for (const body of [
      { keyId: KEY_ID, teamId: TEAM_ID, privateKey: rsa.toString(), environment: 'sandbox' },
      { keyId: KEY_ID, teamId: TEAM_ID, privateKey: 'x'.repeat(200), environment: 'sandbox' },
      { keyId: 'short', teamId: TEAM_ID, privateKey: P8, environment: 'sandbox' },
      { keyId: KEY_ID, teamId: TEAM_ID, privateKey: P8, environment: 'staging' },
    ]) {
      const response = await app.owner.put(credentialsOf(app)).send(body);
      expect(response.status).toBe(422);
    }
    const member = await createUser(t, { org: app.org, role: 'member' });
    await (await signIn(t, member.email)).put(credentialsOf(app)).send({}).expect(403);
    const stranger = await registerApp(t, 'professional');
    await stranger.owner
      .put(credentialsOf(app))
      .send({ keyId: KEY_ID, teamId: TEAM_ID, privateKey: P8, environment: 'sandbox' })
      .expect(404);
  });
});

describe('push tokens', () => {
  it('are registered by an attested device of the app, never by the identity headers alone', async () => {
    const app = await registerApp(t, 'professional');
    const pushToken = deviceTokenHex();
    await sdk(t, app).post('/api/v1/push/tokens').send({ pushToken, subscriberId: 'u1' }).expect(401);
    const { token } = await attestDevice(t, app);
    const other = await registerApp(t, 'professional');
    await sdk(t, other)
      .post('/api/v1/push/tokens')
      .set('Authorization', `Bearer ${token}`)
      .send({ pushToken, subscriberId: 'u1' })
      .expect(401);
    const bad = await sdk(t, app)
      .post('/api/v1/push/tokens')
      .set('Authorization', `Bearer ${token}`)
      .send({ pushToken: 'not-hex', subscriberId: 'u1' });
    expect(bad.status).toBe(422);
    expect(bad.body.fields[0].field).toBe('pushToken');
    // Registering again moves the token to the new subscriber.
    for (const subscriberId of ['u1', 'u2']) {
      await sdk(t, app)
        .post('/api/v1/push/tokens')
        .set('Authorization', `Bearer ${token}`)
        .send({ pushToken, subscriberId })
        .expect(201);
    }
    expect(await t.sql(`SELECT subscriber_id FROM push_tokens WHERE app_id = $1`, [app.id])).toEqual([
      { subscriber_id: 'u2' },
    ]);
  });
});

describe('pushes', () => {
  it('reach the submitter’s and voters’ devices on a staff comment, with a valid provider token', async () => {
    const app = await registerApp(t, 'professional');
    await withCredentials(app);
    const submitterDevice = await registerDevice(app, 'submitter-1');
    const voterDevice = await registerDevice(app, 'voter-1');
    const bystander = await registerDevice(app, 'someone-else');
    const feature = await sdk(t, app)
      .post('/api/v1/feedback/features')
      .send({ title: 'Dark mode', description: 'Please', submitterId: 'submitter-1' })
      .expect(201);
    await sdk(t, app)
      .post(`/api/v1/feedback/features/${feature.body.id}/vote`)
      .send({ voterId: 'voter-1' })
      .expect(201);

    const comment = await app.owner
      .post(`/api/v1/org/feedback/${feature.body.id}/comments`)
      .send({ body: 'Shipping next week' })
      .expect(201);
    await settled(app.id);

    for (const device of [submitterDevice, voterDevice]) {
      const [push] = pushesTo(device);
      expect(push).toMatchObject({ topic: app.bundleId, pushType: 'alert', providerTokenValid: true });
      expect(push.payload).toEqual({
        aps: { alert: { title: 'New comment on “Dark mode”', body: 'Shipping next week' }, sound: 'default' },
        type: 'feature_comment',
        featureRequestId: feature.body.id,
        commentId: comment.body.id,
      });
      expect(decodeProtectedHeader(push.providerToken)).toEqual({ alg: 'ES256', kid: KEY_ID });
      expect(decodeJwt(push.providerToken).iss).toBe(TEAM_ID);
    }
    expect(pushesTo(bystander)).toEqual([]);
    expect((await deliveries(app.id)).map((push) => push.status)).toEqual(['sent', 'sent']);
    // The stored inbox keeps the record as before.
    const inbox = await sdk(t, app).get('/api/v1/feedback/notifications?subscriber_id=submitter-1').expect(200);
    expect(inbox.body.items).toHaveLength(1);
  });

  it('reach the ticket submitter’s device on a staff reply and on resolution', async () => {
    const app = await registerApp(t, 'professional');
    await withCredentials(app);
    const device = await registerDevice(app, 'ticket-user');
    const ticket = await sdk(t, app)
      .post('/api/v1/support/tickets')
      .send({ subject: 'Cannot log in', body: 'It says error 42', submitterId: 'ticket-user' })
      .expect(201);
    await app.owner.post(`/api/v1/org/support/${ticket.body.id}/messages`).send({ body: 'Try again now' }).expect(201);
    await app.owner.post(`/api/v1/org/support/${ticket.body.id}/status`).send({ status: 'resolved' }).expect(200);
    await app.owner.post(`/api/v1/org/support/${ticket.body.id}/status`).send({ status: 'resolved' }).expect(200);
    await settled(app.id);
    // One sweep may send both at once: their order of arrival is not fixed.
    const pushes = pushesTo(device);
    expect(pushes.map((push) => push.payload.type).sort()).toEqual(['ticket_reply', 'ticket_resolved']);
    expect(pushes.find((push) => push.payload.type === 'ticket_reply')!.payload.aps).toEqual({
      alert: { title: 'Reply to “Cannot log in”', body: 'Try again now' },
      sound: 'default',
    });
    expect(pushes.every((push) => push.providerTokenValid)).toBe(true);
  });

  it('removes a token APNs reports unregistered (410), and pushes there no more', async () => {
    const app = await registerApp(t, 'professional');
    await withCredentials(app);
    const gone = await registerDevice(app, 'user-x');
    const alive = await registerDevice(app, 'user-x');
    apns.script(gone, { status: 410, reason: 'Unregistered' });
    const ticket = await sdk(t, app)
      .post('/api/v1/support/tickets')
      .send({ subject: 'Hello there', body: 'A question about billing', submitterId: 'user-x' })
      .expect(201);
    await app.owner.post(`/api/v1/org/support/${ticket.body.id}/messages`).send({ body: 'Answer' }).expect(201);
    await settled(app.id);
    const tokens = await t.sql<{ device_token: string }>(`SELECT device_token FROM push_tokens WHERE app_id = $1`, [
      app.id,
    ]);
    expect(tokens.map((row) => row.device_token)).toEqual([alive]);
    expect((await deliveries(app.id)).map((push) => [push.device_token, push.status, push.last_status]).sort()).toEqual(
      [
        [gone, 'unregistered', 410],
        [alive, 'sent', 200],
      ].sort(),
    );
    await app.owner.post(`/api/v1/org/support/${ticket.body.id}/messages`).send({ body: 'Again' }).expect(201);
    await settled(app.id);
    expect(pushesTo(gone)).toHaveLength(1);
    expect(pushesTo(alive)).toHaveLength(2);
  });

  it('retries 429 and 5xx answers in the job until APNs takes the push', async () => {
    const app = await registerApp(t, 'professional');
    await withCredentials(app);
    const device = await registerDevice(app, 'busy');
    apns.script(device, { status: 429, reason: 'TooManyRequests' }, { status: 503, reason: 'ServiceUnavailable' });
    const ticket = await sdk(t, app)
      .post('/api/v1/support/tickets')
      .send({ subject: 'Retry me', body: 'Please answer me soon', submitterId: 'busy' })
      .expect(201);
    await app.owner.post(`/api/v1/org/support/${ticket.body.id}/messages`).send({ body: 'Hi' }).expect(201);
    for (const status of [429, 503]) {
      await eventually(async () => (await deliveries(app.id))[0]?.last_status === status);
      const [push] = await t.sql<{ status: string; due_later: boolean }>(
        `SELECT status, next_attempt_at > now() AS due_later FROM push_deliveries WHERE app_id = $1`,
        [app.id],
      );
      expect(push).toEqual({ status: 'pending', due_later: true });
      await t.sql(`UPDATE push_deliveries SET next_attempt_at = now() WHERE app_id = $1`, [app.id]);
    }
    await settled(app.id);
    expect(await deliveries(app.id)).toEqual([{ device_token: device, status: 'sent', attempts: 3, last_status: 200 }]);
    expect(pushesTo(device)).toHaveLength(3);
  });

  it('keeps a long reply within the APNs payload limit', async () => {
    const app = await registerApp(t, 'professional');
    await withCredentials(app);
    const device = await registerDevice(app, 'long');
    const ticket = await sdk(t, app)
      .post('/api/v1/support/tickets')
      .send({ subject: 'Long one', body: 'Tell me everything', submitterId: 'long' })
      .expect(201);
    await app.owner
      .post(`/api/v1/org/support/${ticket.body.id}/messages`)
      .send({ body: '設'.repeat(10_000) })
      .expect(201);
    await settled(app.id);
    const [push] = pushesTo(device);
    expect(push.payloadBytes).toBeLessThanOrEqual(4096);
    expect((push.payload.aps as { alert: { body: string } }).alert.body.endsWith('…')).toBe(true);
    expect((await deliveries(app.id))[0].status).toBe('sent');
  });

  it('without credentials, leaves the stored inbox as the only channel', async () => {
    const app = await registerApp(t, 'professional');
    const device = await registerDevice(app, 'quiet');
    const feature = await sdk(t, app)
      .post('/api/v1/feedback/features')
      .send({ title: 'Offline mode', description: 'Please', submitterId: 'quiet' })
      .expect(201);
    await app.owner.post(`/api/v1/org/feedback/${feature.body.id}/comments`).send({ body: 'Noted' }).expect(201);
    expect(await deliveries(app.id)).toEqual([]);
    expect(pushesTo(device)).toEqual([]);
    const inbox = await sdk(t, app).get('/api/v1/feedback/notifications?subscriber_id=quiet').expect(200);
    expect(inbox.body.items).toHaveLength(1);
  });
});
