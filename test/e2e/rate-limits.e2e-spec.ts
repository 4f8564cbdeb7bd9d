// The route limits declared with @RateLimit (RouteRateLimitGuard, a @nestjs/throttler guard over
// the sliding-window store): sign-up, password reset and e-mail change per address, CLI sign-in
// starts per client, SDK feedback floods per client and per app, and failed sign-ins per account
// and per client address.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createOrg, createUser, PASSWORD, randomClientIp, uniqueEmail } from '../factories/identity.js';
import { hashPassword } from '../../src/auth/passwords.js';
import { afterAnswers, sentMails, startTestApp, type TestApp } from '../harness/test-app.js';
import { registerApp, sdk, type RegisteredApp } from '../support/sdk-client.js';

describe('route limits', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  function login(email: string, password: string, ip: string) {
    return t.http().post('/api/v1/auth/login').set('X-Forwarded-For', ip).send({ email, password });
  }

  it('refuses the 4th sign-up for one address within the hour with 429 and Retry-After, sending no mail', async () => {
    const email = uniqueEmail('signup');
    const answers = [];
    let mailsBeforeFourth = 0;
    for (let i = 0; i < 4; i++) {
      if (i === 3) {
        await afterAnswers(t);
        mailsBeforeFourth = sentMails(t, email).length;
      }
      // A new client address each time: the per-address budget holds whatever the client.
      answers.push(
        await t
          .http()
          .post('/api/v1/auth/register')
          .set('X-Forwarded-For', randomClientIp())
          .send({ email: i % 2 ? email.toUpperCase() : email, password: PASSWORD, organizationName: 'Flood' }),
      );
    }
    expect(answers.map((response) => response.status)).toEqual([202, 202, 202, 429]);
    expect(mailsBeforeFourth).toBeGreaterThan(0);
    const refused = answers[3];
    expect(refused.body.code).toBe('rate_limited');
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect(refused.body.error).toContain(`Try again in ${refused.headers['retry-after']} seconds`);
    await afterAnswers(t);
    expect(sentMails(t, email)).toHaveLength(mailsBeforeFourth);
  });

  it('limits password reset mails per address, whichever client asks', async () => {
    const org = await createOrg(t);
    const user = await createUser(t, { org });
    const statuses = [];
    for (let i = 0; i < 4; i++) {
      const response = await t
        .http()
        .post('/api/v1/auth/forgot-password')
        .set('X-Forwarded-For', randomClientIp())
        .send({ email: user.email });
      statuses.push(response.status);
    }
    expect(statuses).toEqual([200, 200, 200, 429]);
  });

  it('refuses the 31st CLI sign-in start from one client address within a minute with 429, storing no session, and not another client', async () => {
    const ip = randomClientIp();
    const stored = async () => (await t.sql<{ n: number }>(`SELECT count(*)::int AS n FROM cli_sessions`))[0].n;
    const start = (from: string) => t.http().post('/api/v1/auth/cli/sessions').set('X-Forwarded-For', from);
    const statuses = [];
    for (let i = 0; i < 30; i++) statuses.push((await start(ip)).status);
    expect(statuses).toEqual(Array.from({ length: 30 }, () => 201));
    const before = await stored();
    const refused = await start(ip);
    expect(refused.status).toBe(429);
    expect(refused.body.code).toBe('rate_limited');
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect(await stored()).toBe(before);
    await start(randomClientIp()).expect(201);
  });

  it('refuses the 121st CLI sign-in poll from one client address within a minute with 429, and not another client', async () => {
    const ip = randomClientIp();
    const session = (await t.http().post('/api/v1/auth/cli/sessions').set('X-Forwarded-For', ip).expect(201)).body as {
      session_id: string;
    };
    const poll = (from: string) =>
      t.http().get(`/api/v1/auth/cli/sessions/${session.session_id}`).set('X-Forwarded-For', from);
    const statuses = new Set<number>();
    for (let i = 0; i < 120; i++) statuses.add((await poll(ip)).status);
    expect([...statuses]).toEqual([200]);
    const refused = await poll(ip);
    expect([refused.status, refused.body.code]).toEqual([429, 'rate_limited']);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    await poll(randomClientIp()).expect(200);
  });

  describe('SDK feedback floods', () => {
    let app: RegisteredApp;
    beforeAll(async () => {
      app = await registerApp(t);
    });

    it('refuses the 61st feature request, vote or ticket from one client within a minute, and not another client', async () => {
      const ip = randomClientIp();
      const post = (path: string, body: Record<string, unknown>) =>
        sdk(t, app).post(path).set('X-Forwarded-For', ip).send(body);
      const first = await post('/api/v1/feedback/features', { title: 'Dark mode', submitterId: 'u-1' });
      expect(first.status).toBe(201);
      const statuses = [];
      for (let i = 0; i < 60; i++) {
        // Invented voter ids do not help: the budget is the client's.
        const vote = await post(`/api/v1/feedback/features/${first.body.id}/vote`, {
          voterId: `voter-${randomUUID()}`,
        });
        statuses.push(vote.status);
      }
      expect(statuses.slice(0, 59).every((status) => status < 300)).toBe(true);
      expect(statuses[59]).toBe(429);
      const ticket = await post('/api/v1/support/tickets', {
        subject: 'Cannot sign in',
        body: 'The app says my password is wrong.',
        submitterId: 'u-1',
      });
      expect([ticket.status, Number(ticket.headers['retry-after']) > 0]).toEqual([429, true]);

      const other = await sdk(t, app)
        .post('/api/v1/support/tickets')
        .set('X-Forwarded-For', randomClientIp())
        .send({ subject: 'Cannot sign in', body: 'The app says my password is wrong.', submitterId: 'u-2' });
      expect(other.status).toBe(201);
    });
  });

  describe('sign-in', () => {
    it('lets an office of 20 users behind one address all sign in within a minute', async () => {
      const org = await createOrg(t);
      const office = randomClientIp();
      const users = await Promise.all(Array.from({ length: 20 }, () => createUser(t, { org })));
      const statuses = [];
      for (const user of users) statuses.push((await login(user.email, PASSWORD, office)).status);
      expect(statuses).toEqual(Array(20).fill(200));
    });

    it('throttles an account after 10 wrong passwords, answering exactly like a wrong password', async () => {
      const org = await createOrg(t);
      const target = await createUser(t, { org });
      const colleague = await createUser(t, { org });
      for (let i = 0; i < 60; i++) {
        const wrong = await login(target.email, 'wrong-password', randomClientIp());
        expect(wrong.status).toBe(401);
      }
      const throttled = await login(target.email, PASSWORD, randomClientIp());
      const wrong = await login(uniqueEmail('nobody'), 'wrong-password', randomClientIp());
      expect(throttled.status).toBe(401);
      expect({ ...throttled.body, requestId: 'x' }).toEqual({ ...wrong.body, requestId: 'x' });
      expect(throttled.headers['retry-after']).toBeUndefined();
      // Other accounts are untouched.
      expect((await login(colleague.email, PASSWORD, randomClientIp())).status).toBe(200);
    });

    it('ends the known-browser budget with the password: a cookie issued before a new password does not pass a throttled account', async () => {
      const org = await createOrg(t);
      const owner = await createUser(t, { org });
      const oldBrowser = t.agent();
      await oldBrowser
        .post('/api/v1/auth/login')
        .set('X-Forwarded-For', randomClientIp())
        .send({ email: owner.email, password: PASSWORD })
        .expect(200);
      // The password is replaced (a reset), then the account's budget is spent from elsewhere.
      const newPassword = 'a-new-password-after-reset';
      await t.sql(`UPDATE users SET password_hash = $2 WHERE id = $1`, [owner.id, await hashPassword(newPassword, 4)]);
      for (let i = 0; i < 11; i++) {
        expect((await login(owner.email, 'wrong-password', randomClientIp())).status).toBe(401);
      }
      // The old browser's cookie names a credential that is gone: it is judged as any browser.
      const withOldCookie = await oldBrowser
        .post('/api/v1/auth/login')
        .set('X-Forwarded-For', randomClientIp())
        .send({ email: owner.email, password: newPassword });
      expect(withOldCookie.status).toBe(401);
      expect(withOldCookie.body).toMatchObject({ code: 'invalid_credentials' });
    });

    it("keeps a locked account's owner in from the browser that signed in before, and the attacker out with the wrong-password answer", async () => {
      const org = await createOrg(t);
      const owner = await createUser(t, { org });
      const ownersBrowser = t.agent();
      const first = await ownersBrowser
        .post('/api/v1/auth/login')
        .set('X-Forwarded-For', randomClientIp())
        .send({ email: owner.email, password: PASSWORD });
      expect(first.status).toBe(200);
      const setCookies = ([] as string[]).concat(first.headers['set-cookie'] ?? []);
      expect(setCookies.find((cookie) => cookie.startsWith('attestly.device='))).toMatch(/HttpOnly/i);

      // Someone who knows the address spends its budget from everywhere, and goes on trying.
      const nobody = uniqueEmail('nobody');
      for (let i = 0; i < 12; i++) {
        expect((await login(owner.email, 'wrong-password', randomClientIp())).status).toBe(401);
        expect((await login(nobody, 'wrong-password', randomClientIp())).status).toBe(401);
      }
      // Throttled, the right password, the wrong one and an address without an account read alike.
      const answers = [
        await login(owner.email, PASSWORD, randomClientIp()),
        await login(owner.email, 'wrong-password', randomClientIp()),
        await login(nobody, PASSWORD, randomClientIp()),
        await login(nobody, 'wrong-password', randomClientIp()),
      ];
      expect(answers.map((answer) => answer.status)).toEqual([401, 401, 401, 401]);
      expect(new Set(answers.map((answer) => JSON.stringify({ ...answer.body, requestId: 'x' }))).size).toBe(1);
      expect(answers.map((answer) => answer.headers['retry-after'])).toEqual([
        undefined,
        undefined,
        undefined,
        undefined,
      ]);
      expect(answers[0].body).toMatchObject({ code: 'invalid_credentials' });

      // The owner's browser signs in, from a new address too, and again.
      for (let i = 0; i < 2; i++) {
        const again = await ownersBrowser
          .post('/api/v1/auth/login')
          .set('X-Forwarded-For', randomClientIp())
          .send({ email: owner.email, password: PASSWORD });
        expect(again.status).toBe(200);
      }
      // A fresh browser is still refused, and so is one showing a forged or another account's cookie.
      expect((await login(owner.email, PASSWORD, randomClientIp())).status).toBe(401);
      const ownerCookie = setCookies.find((cookie) => cookie.startsWith('attestly.device='))!.split(';')[0];
      const forged = `${ownerCookie.slice(0, -4)}AAAA`;
      const attacker = await createUser(t, { org: await createOrg(t) });
      const attackersBrowser = t.agent();
      await attackersBrowser.post('/api/v1/auth/login').send({ email: attacker.email, password: PASSWORD }).expect(200);
      for (const browser of [
        t.http().post('/api/v1/auth/login').set('Cookie', forged),
        attackersBrowser.post('/api/v1/auth/login'),
      ]) {
        const refused = await browser
          .set('X-Forwarded-For', randomClientIp())
          .send({ email: owner.email, password: PASSWORD });
        expect(refused.status).toBe(401);
      }
    });

    it("counts a known browser's wrong passwords against its own budget, not the account's", async () => {
      const owner = await createUser(t, { org: await createOrg(t) });
      const [laptop, phone] = [t.agent(), t.agent()];
      for (const browser of [laptop, phone]) {
        await browser.post('/api/v1/auth/login').send({ email: owner.email, password: PASSWORD }).expect(200);
      }
      const fromLaptop = (password: string) =>
        laptop
          .post('/api/v1/auth/login')
          .set('X-Forwarded-For', randomClientIp())
          .send({ email: owner.email, password });
      for (let i = 0; i < 10; i++) expect((await fromLaptop('wrong-password')).status).toBe(401);
      // The laptop's budget is spent: even the right password now reads as a wrong one there.
      const refused = await fromLaptop(PASSWORD);
      expect([refused.status, refused.body.code]).toEqual([401, 'invalid_credentials']);
      // Its failures spent neither the account's budget nor the address's: others sign in.
      await phone.post('/api/v1/auth/login').send({ email: owner.email, password: PASSWORD }).expect(200);
      expect((await login(owner.email, PASSWORD, randomClientIp())).status).toBe(200);
    });

    it('does not spend the budget on successful sign-ins', async () => {
      const org = await createOrg(t);
      const user = await createUser(t, { org });
      const ip = randomClientIp();
      for (let i = 0; i < 15; i++) expect((await login(user.email, PASSWORD, ip)).status).toBe(200);
      for (let i = 0; i < 9; i++) expect((await login(user.email, 'wrong-password', ip)).status).toBe(401);
      expect((await login(user.email, PASSWORD, ip)).status).toBe(200);
    });

    it('refuses a client address after 30 wrong passwords across accounts with 429', async () => {
      const ip = randomClientIp();
      for (let i = 0; i < 30; i++) {
        expect((await login(uniqueEmail(`stuffing-${i}`), 'wrong-password', ip)).status).toBe(401);
      }
      const refused = await login(uniqueEmail('stuffing-last'), 'wrong-password', ip);
      expect([refused.status, refused.body.code]).toEqual([429, 'rate_limited']);
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    });
  });
});
