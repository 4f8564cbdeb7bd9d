import { beforeEach, describe, expect, it } from '@jest/globals';
import { FakeAuthTokensRepository, FakeSessionsRepository } from '../../test/fakes/auth.js';
import { FakeOrganizations } from '../../test/fakes/identity-organizations.js';
import { FakeSsoConnectionsRepository } from '../../test/fakes/sso.js';
import { FakeUnitOfWork } from '../../test/fakes/unit-of-work.js';
import { FakeUsersRepository, type StoredUser } from '../../test/fakes/users.js';
import type { AuditService } from '../audit/audit.service.js';
import type { SessionCaller } from '../common/access/auth-context.js';
import { sha256Hex } from '../common/crypto.js';
import { trustOrganizationId } from '../common/access/tenant-id.js';
import type { BackgroundTasks } from '../common/scheduling/background-tasks.js';
import type { AppConfig } from '../config/app-config.js';
import type { MailService } from '../mail/mail.service.js';
import type { MembersService } from '../team/members.service.js';
import { AccountLifecycleService } from '../users/account-lifecycle.service.js';
import type { User } from '../users/user.entity.js';
import type { UsersRepository } from '../users/users.repository.js';
import { UsersService } from '../users/users.service.js';
import type { AuthTokensRepository } from './auth-tokens.repository.js';
import { AuthTokensService } from './auth-tokens.service.js';
import { AuthService } from './auth.service.js';
import type { PasswordGate } from './password-gate.js';
import type { SessionsRepository } from './session/sessions.repository.js';
import type { SsoConnectionsRepository } from './sso/sso-connections.repository.js';
import { SsoEnforcement } from './sso/sso-enforcement.js';
import { fakeDiscovery } from '../../test/harness/fake-discovery.js';

const config = {
  bcryptRounds: 4,
  baseUrl: 'http://api.test',
  dashboardOrigins: ['http://dash.test'],
} as unknown as AppConfig;

/** What the service mailed, with the token of each link. */
class FakeMail {
  readonly sent: { to: string; token: string | null }[] = [];
  send(mail: { to: string; text?: string; html?: string }): Promise<void> {
    this.sendLater(mail);
    return Promise.resolve();
  }
  sendLater(mail: { to: string; text?: string; html?: string }): void {
    const token = /token=([^\s&"<]+)/.exec(`${mail.text ?? ''} ${mail.html ?? ''}`)?.[1];
    this.sent.push({ to: mail.to, token: token ? decodeURIComponent(token) : null });
  }
}

/** Runs background work at once, so a test can wait for it. */
class FakeBackground {
  readonly running: Promise<void>[] = [];
  run(_name: string, task: () => Promise<void>): void {
    this.running.push(task());
  }
  async settled(): Promise<void> {
    await Promise.all(this.running);
  }
}

const failure = (promise: Promise<unknown>) =>
  promise.then(
    () => 'ok',
    (error: { getStatus(): number; code: string }) => `${error.getStatus()} ${error.code}`,
  );

describe('AuthService (sign-in, e-mail and password flows, on fakes)', () => {
  let uow: FakeUnitOfWork;
  let accounts: FakeUsersRepository;
  let tokens: FakeAuthTokensRepository;
  let sessions: FakeSessionsRepository;
  let organizations: FakeOrganizations;
  let connections: FakeSsoConnectionsRepository;
  let mail: FakeMail;
  let background: FakeBackground;
  let audited: { action: string; organizationId: string }[];
  let gateAnswer: User | null;
  let auth: AuthService;
  let ann: StoredUser;
  const caller = (): SessionCaller => ({
    kind: 'session',
    userId: ann.id,
    email: ann.email,
    isSuperAdmin: false,
    role: null,
    speaksForAccount: true,
  });
  const attempt = { email: 'ann@example.com', password: 'pw', clientIp: undefined, deviceCookie: undefined };

  beforeEach(() => {
    uow = new FakeUnitOfWork();
    accounts = new FakeUsersRepository();
    tokens = new FakeAuthTokensRepository();
    sessions = new FakeSessionsRepository();
    organizations = new FakeOrganizations();
    connections = new FakeSsoConnectionsRepository();
    mail = new FakeMail();
    background = new FakeBackground();
    audited = [];
    gateAnswer = null;
    const users = new UsersService(
      uow.asUnitOfWork(),
      accounts as unknown as UsersRepository,
      new AccountLifecycleService(fakeDiscovery(() => [])),
    );
    const passwords = {
      check: () => (gateAnswer ? Promise.resolve(gateAnswer) : Promise.reject(new Error('no account'))),
      deviceCookieAfterSignIn: () => Promise.resolve('device-cookie'),
    } as unknown as PasswordGate;
    const audit = {
      record: (_auth: unknown, entry: { action: string; organizationId: string }) =>
        Promise.resolve(void audited.push({ action: entry.action, organizationId: entry.organizationId })),
    } as unknown as AuditService;
    auth = new AuthService(
      uow.asUnitOfWork(),
      config,
      new AuthTokensService(uow.asUnitOfWork(), tokens as unknown as AuthTokensRepository),
      mail as unknown as MailService,
      organizations.asService(),
      users,
      audit,
      background as unknown as BackgroundTasks,
      passwords,
      {} as MembersService,
      new SsoEnforcement(connections as unknown as SsoConnectionsRepository, organizations.asService()),
      sessions as unknown as SessionsRepository,
    );
    ann = accounts.add({ email: 'ann@example.com' });
  });

  describe('login', () => {
    it('tells the account’s state only after the password was right: unverified, suspended, disabled', async () => {
      for (const [patch, answer] of [
        [{ emailVerifiedAt: null }, '403 email_unverified'],
        [{ status: 'suspended' }, '403 account_suspended'],
        [{ status: 'disabled' }, '403 account_disabled'],
        [{ status: 'pending_deletion' }, '403 account_disabled'],
      ] as const) {
        gateAnswer = (await accounts.findById(accounts.add({ email: `${answer}@x.test`, ...patch }).id))!;
        expect(await failure(auth.login(attempt))).toBe(answer);
      }
    });

    it('refuses a password sign-in with 403 sso_required only when every organization enforces SSO on the user', async () => {
      organizations.add('org-a', 'enterprise');
      organizations.add('org-b', 'enterprise');
      organizations.join('org-a', ann.id, 'member');
      organizations.join('org-b', ann.id, 'member');
      const enforce = (id: string) =>
        connections.upsert(trustOrganizationId(id), {
          issuer: 'https://idp.test',
          clientId: 'c',
          clientSecretSealed: 's',
          allowedDomains: [],
          defaultRole: 'member',
          enforce: true,
          domainToken: 't',
        });
      gateAnswer = (await accounts.findById(ann.id))!;
      await enforce('org-a');
      expect(await failure(auth.login(attempt))).toBe('ok');
      expect(await auth.defaultOrganization(ann.id)).toBe('org-b');
      await enforce('org-b');
      expect(await failure(auth.login(attempt))).toBe('403 sso_required');
    });

    it('records the sign-in and hands back the browser’s device cookie', async () => {
      gateAnswer = (await accounts.findById(ann.id))!;
      expect(await auth.login(attempt)).toMatchObject({ user: { id: ann.id }, deviceCookie: 'device-cookie' });
      expect(accounts.rows.get(ann.id)!.lastLoginAt).not.toBeNull();
    });
  });

  describe('sign-up and e-mail confirmation', () => {
    it('mails a confirmation link to a new address, and only a notice (no account, no link) to a taken one', async () => {
      const created: string[] = [];
      (organizations as unknown as { createWithOwner: unknown }).createWithOwner = (input: { ownerId: string }) => {
        created.push(input.ownerId);
        return Promise.resolve({ id: 'org-new', slug: 'new' });
      };
      auth.register({ email: 'new@example.com', password: 'long-password', organizationName: 'New' });
      auth.register({ email: 'ANN@example.com', password: 'long-password', organizationName: 'Dup' });
      await background.settled();
      expect(accounts.rows.size).toBe(2);
      expect(created).toHaveLength(1);
      // The two sign-ups hash their passwords on the thread pool side by side: either may mail first.
      const mails = mail.sent.map(({ to, token }) => ({ to, link: token !== null }));
      expect(mails.sort((a, b) => a.to.localeCompare(b.to))).toEqual([
        { to: 'ANN@example.com', link: false },
        { to: 'new@example.com', link: true },
      ]);
      const link = mail.sent.find(({ to }) => to === 'new@example.com')!.token!;
      const userId = await auth.verifyEmail(link);
      expect((await accounts.findById(userId))?.isActive).toBe(true);
      expect(await failure(auth.verifyEmail(link))).toBe('422 unprocessable_entity');
    });
  });

  describe('password reset', () => {
    it('keeps at most three live reset links per account, and mails nothing for an unknown address', async () => {
      for (const address of [
        'ann@example.com',
        'ann@example.com',
        'ann@example.com',
        'ann@example.com',
        'nobody@x.test',
      ]) {
        auth.forgotPassword(address);
        await background.settled();
      }
      expect(mail.sent.map(({ to }) => to)).toEqual(['ann@example.com', 'ann@example.com', 'ann@example.com']);
      expect(accounts.locked.filter((id) => id === ann.id)).toHaveLength(4);
    });

    it('sets the password once per link, then invalidates the other links and ends every session', async () => {
      auth.forgotPassword('ann@example.com');
      auth.forgotPassword('ann@example.com');
      await background.settled();
      const [first, second] = mail.sent.map(({ token }) => token!);
      await sessions.save('sid-1', ann.id, {} as never, new Date(Date.now() + 60_000));
      expect(await failure(auth.resetPassword(first, 'new-password', 'other-password'))).toBe('400 bad_request');
      expect(await failure(auth.resetPassword(first, 'short', 'short'))).toBe('400 bad_request');
      await auth.resetPassword(first, 'new-password', 'new-password');
      expect(accounts.rows.get(ann.id)!.passwordHash).not.toBe('');
      expect(sessions.of(ann.id)).toEqual([]);
      expect(await failure(auth.resetPassword(first, 'new-password', 'new-password'))).toBe('400 bad_request');
      expect(await failure(auth.resetPassword(second, 'new-password', 'new-password'))).toBe('400 bad_request');
    });

    it('refuses an expired link', async () => {
      auth.forgotPassword('ann@example.com');
      await background.settled();
      tokens.age(2 * 60 * 60 * 1000);
      expect(await failure(auth.resetPassword(mail.sent[0].token!, 'new-password', 'new-password'))).toBe(
        '400 bad_request',
      );
      expect(tokens.rows[0].tokenHash).toBe(sha256Hex(mail.sent[0].token!));
    });
  });

  describe('e-mail change', () => {
    it('refuses an address another account has (409) and a fourth pending change (429)', async () => {
      accounts.add({ email: 'bob@example.com' });
      expect(await failure(auth.changeEmail(caller(), 'BOB@example.com'))).toBe('409 conflict');
      for (let i = 0; i < 3; i++) await auth.changeEmail(caller(), `ann${i}@example.com`);
      expect(await failure(auth.changeEmail(caller(), 'ann9@example.com'))).toBe('429 rate_limited');
      expect(mail.sent.map(({ to }) => to)).toEqual(['ann0@example.com', 'ann1@example.com', 'ann2@example.com']);
    });

    it('switches the address when the link is followed, once, and not to an address taken meanwhile', async () => {
      await auth.changeEmail(caller(), 'ann.new@example.com');
      await auth.changeEmail(caller(), 'ann.other@example.com');
      const [first, second] = mail.sent.map(({ token }) => token!);
      expect(await auth.confirmEmailChange(first)).toBe('ann.new@example.com');
      expect(accounts.rows.get(ann.id)!.email).toBe('ann.new@example.com');
      expect(await failure(auth.confirmEmailChange(first))).toBe('400 bad_request');
      accounts.add({ email: 'ann.other@example.com' });
      expect(await failure(auth.confirmEmailChange(second))).toBe('409 conflict');
    });

    it('needs a session that speaks for the account', async () => {
      expect(await failure(auth.changeEmail({ ...caller(), speaksForAccount: false }, 'x@example.com'))).toMatch(
        /^403/,
      );
    });
  });

  it('audits a sign-in in the organization the session starts in, and nothing without one', async () => {
    await auth.recordLogin(ann.id, null, null);
    await auth.recordLogin(ann.id, trustOrganizationId('org-a'), '203.0.113.1');
    expect(audited).toEqual([{ action: 'user.login', organizationId: 'org-a' }]);
  });
});
