import { Inject, Injectable } from '@nestjs/common';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { assertSpeaksForAccount, type SessionCaller } from '../common/access/auth-context.js';
import { badRequest, conflict, forbidden, notFound, tooManyRequests } from '../common/errors/app-exception.js';
import {
  accountDisabled,
  accountSuspended,
  emailUnverified,
  invalidLink,
  signInRequired,
  ssoRequired,
} from './auth.exceptions.js';
import { isUniqueViolation } from '../database/unique-violation.js';
import { AuditService } from '../audit/audit.service.js';
import { MailService } from '../mail/mail.service.js';
import { mailTemplates } from '../mail/mail-templates.js';
import { OrganizationsService } from '../organizations/organizations.service.js';
import type { OrganizationRecord } from '../organizations/organizations.repository.js';
import { AuthTokensService, MAX_ACTIVE_TOKENS } from './auth-tokens.service.js';
import { MIN_PASSWORD_LENGTH, hashPassword } from './passwords.js';
import { PasswordGate, type PasswordAttempt } from './password-gate.js';
import type { User } from '../users/user.entity.js';
import { UsersService } from '../users/users.service.js';
import { BackgroundTasks } from '../common/scheduling/background-tasks.js';
import { SsoEnforcement, ssoEnforcedOn } from './sso/sso-enforcement.js';
import { UnitOfWork } from '../database/unit-of-work.js';
import { SessionsRepository } from './session/sessions.repository.js';
import { PASSWORD_SIGN_IN, admission, shownOrganizations, type SessionSignIn } from './session/session-admission.js';
import { MembersService } from '../team/members.service.js';
import type { OrganizationId } from '../common/access/tenant-id.js';

export const REGISTER_MESSAGE =
  'Check your inbox: if the address can be registered, a confirmation link is on its way.';
export const FORGOT_PASSWORD_MESSAGE =
  'If an account exists for that address, a password reset link is on its way. It is valid for one hour.';

@Injectable()
export class AuthService {
  constructor(
    private readonly uow: UnitOfWork,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly tokens: AuthTokensService,
    private readonly mail: MailService,
    private readonly organizations: OrganizationsService,
    private readonly users: UsersService,
    private readonly audit: AuditService,
    private readonly background: BackgroundTasks,
    private readonly passwords: PasswordGate,
    private readonly members: MembersService,
    private readonly enforcement: SsoEnforcement,
    private readonly sessions: SessionsRepository,
  ) {}

  /**
   * Sign-up: an inactive account owning a new Free organization, active once the mailed link is
   * followed. An address that already has an account gets a notice instead, and the caller sees
   * the same answer either way.
   */
  /**
   * Accepts a sign-up and does the work after answering: whether the address has an account
   * (a new account and its confirmation mail, or an "already registered" notice) must not show
   * in how long the answer takes.
   */
  register(input: { email: string; password: string; organizationName: string }): void {
    this.background.run('register', () => this.registerNow(input));
  }

  private async registerNow(input: { email: string; password: string; organizationName: string }): Promise<void> {
    const passwordHash = await hashPassword(input.password, this.config.bcryptRounds);
    const outcome = await this.uow.run(async () => {
      const userId = await this.users.createIfAbsent({ email: input.email, passwordHash });
      if (!userId) return null;
      await this.organizations.createWithOwner({ name: input.organizationName, ownerId: userId });
      return this.tokens.issue(userId, 'verify_email');
    });
    const mail = outcome
      ? mailTemplates.verifyEmail(this.link('/api/v1/auth/verify-email', outcome))
      : mailTemplates.alreadyRegistered(this.dashboardPage('/login'), this.dashboardPage('/forgot-password'));
    await this.mail.send({ to: input.email, ...mail });
  }

  /**
   * Checks credentials through the password gate (its failure budgets, the browser's device
   * cookie); reveals the account's state only to someone who knows its password. Answers the
   * account and the device cookie its browser is to keep.
   */
  async login(attempt: PasswordAttempt): Promise<{ user: User; deviceCookie: string }> {
    const user = await this.passwords.check(attempt);
    if (!user.emailVerifiedAt) {
      throw emailUnverified();
    }
    if (user.status === 'suspended') {
      throw accountSuspended();
    }
    if (user.status !== 'active') {
      throw accountDisabled();
    }
    await this.enforcement.assertPasswordSignInAllowed(
      user.id,
      (await this.organizations.listFor(user.id)).map((organization) => organization.id),
    );
    await this.users.recordSignIn(user.id);
    return { user, deviceCookie: await this.passwords.deviceCookieAfterSignIn(user, attempt.deviceCookie) };
  }

  async recordLogin(userId: string, organizationId: OrganizationId | null, ipAddress: string | null): Promise<void> {
    if (!organizationId) return;
    const user = await this.users.findById(userId);
    if (!user) return;
    await this.audit.record(
      { caller: sessionCaller(user, null), organizationId, ipAddress },
      { organizationId, action: 'user.login', resourceType: 'user', resourceId: userId },
    );
  }

  /**
   * The organization a fresh session starts in: the first joined of those its sign-in admits (a
   * password session skips the organizations that enforce SSO on the user).
   */
  async defaultOrganization(userId: string, signIn: SessionSignIn = PASSWORD_SIGN_IN): Promise<OrganizationId | null> {
    const memberOf = await this.organizations.listFor(userId);
    const enforcing = await this.enforcement.enforcingOrganizations(userId);
    const first = memberOf.find(
      ({ id }) =>
        admission(signIn, { organizationId: id, member: true, isSuperAdmin: false, ssoEnforced: enforcing.has(id) })
          .admitted,
    );
    return first?.id ?? null;
  }

  async verifyEmail(token: string): Promise<string> {
    return this.uow.run(async () => {
      const record = await this.tokens.consume('verify_email', token);
      if (!record) {
        throw invalidLink();
      }
      await this.users.markVerified(record.userId);
      return record.userId;
    });
  }

  /** Answers at once; the account lookup, the token and the mail follow (see `register`). */
  forgotPassword(email: string): void {
    this.background.run('forgot-password', () => this.forgotPasswordNow(email));
  }

  private async forgotPasswordNow(email: string): Promise<void> {
    const user = await this.users.findByEmail(email);
    if (!user || user.status !== 'active') return;
    const token = await this.uow.run(async () => {
      await this.users.lock(user.id);
      if ((await this.tokens.activeCount(user.id, 'reset_password')) >= MAX_ACTIVE_TOKENS) return null;
      return this.tokens.issue(user.id, 'reset_password');
    });
    if (token)
      await this.mail.send({
        to: user.email,
        ...mailTemplates.resetPassword(this.link('/reset-password', token, 'dashboard')),
      });
  }

  /** Sets the password, then invalidates every other reset link and every session of the user. */
  async resetPassword(token: string, password: string, confirmation: string): Promise<void> {
    if (password !== confirmation) throw badRequest('password and confirm_password differ');
    if (password.length < MIN_PASSWORD_LENGTH) {
      throw badRequest(`password must be at least ${MIN_PASSWORD_LENGTH} characters`);
    }
    const passwordHash = await hashPassword(password, this.config.bcryptRounds);
    await this.uow.run(async () => {
      const record = await this.tokens.consume('reset_password', token);
      if (!record) throw badRequest('The reset link is invalid or has expired', { hint: 'Ask for a new link' });
      await this.users.setPassword(record.userId, passwordHash);
      await this.tokens.revokeAll(record.userId, 'reset_password');
      await this.sessions.deleteForUsers([record.userId]);
    });
  }

  async changeEmail(caller: SessionCaller, newEmail: string): Promise<void> {
    assertSpeaksForAccount(caller);
    const token = await this.uow.run(async () => {
      await this.users.lock(caller.userId);
      await this.assertEmailFree(newEmail, caller.userId);
      if ((await this.tokens.activeCount(caller.userId, 'email_change')) >= MAX_ACTIVE_TOKENS) {
        throw tooManyRequests(
          'Too many pending e-mail changes: confirm one or wait for the oldest to expire.',
          await this.tokens.secondsUntilOneFrees(caller.userId, 'email_change'),
        );
      }
      return this.tokens.issue(caller.userId, 'email_change', newEmail);
    });
    this.mail.sendLater({
      to: newEmail,
      ...mailTemplates.confirmEmailChange(this.link('/confirm-email-change', token, 'dashboard'), newEmail),
    });
  }

  async confirmEmailChange(token: string): Promise<string> {
    return this.uow.run(async () => {
      const record = await this.tokens.consume('email_change', token);
      if (!record?.newEmail) throw badRequest('The confirmation link is invalid or has expired');
      await this.assertEmailFree(record.newEmail, record.userId);
      try {
        await this.users.setAddress(record.userId, record.newEmail);
      } catch (error) {
        if (isUniqueViolation(error)) throw conflict('That e-mail address is already in use');
        throw error;
      }
      return record.newEmail;
    });
  }

  /**
   * The organizations a session is shown: the caller's (all of them for a super admin), as far as
   * the session's sign-in reveals them (`shownOrganizations`: a session made by an organization's
   * provider sees that organization only).
   */
  async organizationsOf(caller: SessionCaller, activeOrganizationId: string | null, signIn: SessionSignIn) {
    const organizations = await this.organizations.listFor(caller.userId, { all: caller.isSuperAdmin });
    return shownOrganizations(signIn, organizations).map(({ id, name, slug, serviceTier }) => {
      const plainId: string = id; // the response carries the id as a plain string
      return { id: plainId, name, slug, serviceTier, isActive: id === activeOrganizationId };
    });
  }

  /**
   * The organization a session may switch to: the caller must be a member (super admins aside) and
   * the session's sign-in must admit it (session-admission.ts): a session made by one
   * organization's provider needs the other organization's own sign-in, and a password session
   * does not enter an organization that enforces SSO on the user.
   */
  async organizationToSwitchTo(
    caller: SessionCaller,
    slug: string,
    signIn: SessionSignIn,
  ): Promise<OrganizationRecord> {
    const organization = await this.organizations.findBySlug(slug);
    if (!organization) throw notFound('Organization');
    const role = await this.organizations.roleOf(organization.id, caller.userId);
    const connection = await this.enforcement.connectionState(organization);
    const verdict = admission(signIn, {
      organizationId: organization.id,
      member: role !== null,
      isSuperAdmin: caller.isSuperAdmin,
      ssoEnforced: ssoEnforcedOn(connection?.enforce ?? null, organization.serviceTier, role),
    });
    if (verdict.admitted) return organization;
    switch (verdict.reason) {
      case 'not_member':
        throw forbidden('You are not a member of this organization');
      case 'sso_required':
        throw ssoRequired(organization.slug);
      case 'sign_in_required':
        throw signInRequired(organization.slug, connection !== null);
    }
  }

  /**
   * The caller leaves an organization they are a member of (not as its Owner). Needs no session in
   * that organization: whoever cannot enter an organization that enforces SSO can still leave it.
   */
  async leaveOrganization(
    caller: SessionCaller,
    slug: string,
    signIn: SessionSignIn,
    ipAddress: string | null,
  ): Promise<void> {
    const organization = await this.organizations.findBySlug(slug);
    if (!organization || !(await this.organizations.roleOf(organization.id, caller.userId))) {
      throw notFound('Organization');
    }
    // Leaving changes the account's memberships: a session that speaks for the account may leave
    // any organization (an SSO-enforcing one included), one made by an organization's provider
    // only that organization.
    if (!signIn.ssoOrganizationIds.includes(organization.id)) assertSpeaksForAccount(caller);
    await this.members.leave(caller, organization.id, ipAddress);
  }

  private async assertEmailFree(email: string, userId: string): Promise<void> {
    if (await this.users.isAddressTaken(email, userId)) throw conflict('That e-mail address is already in use');
  }

  /** Links to API routes use BASE_URL; links to dashboard pages the first dashboard origin. */
  private link(path: string, token: string, target: 'api' | 'dashboard' = 'api'): string {
    const base = target === 'dashboard' ? this.dashboardPage('') : this.config.baseUrl;
    return `${base}${path}?token=${encodeURIComponent(token)}`;
  }

  /** A page of the dashboard (its first origin; the service's own address when none is set). */
  private dashboardPage(path: string): string {
    return `${this.config.dashboardOrigins[0] ?? this.config.baseUrl}${path}`;
  }
}

export function sessionCaller(
  user: Pick<User, 'id' | 'email' | 'isSuperAdmin'>,
  role: SessionCaller['role'],
): SessionCaller {
  return { kind: 'session', userId: user.id, email: user.email, isSuperAdmin: user.isSuperAdmin, role };
}
