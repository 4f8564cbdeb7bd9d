import { Inject, Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import * as oidc from 'openid-client';
import { DataSource, type EntityManager } from 'typeorm';
import type { SessionCaller } from '../../common/access/auth-context.js';
import { randomSecret, safeEqual, sha256Hex } from '../../common/crypto.js';
import { tierDefinition } from '../../common/tiers.js';
import type { AppConfig } from '../../config/app-config.js';
import { APP_CONFIG } from '../../config/config.module.js';
import { AuditService } from '../../audit/audit.service.js';
import { queryRows } from '../../database/sql.js';
import { Metrics } from '../../metrics/metrics.js';
import { OrganizationsService } from '../../organizations/organizations.service.js';
import { AppException } from '../../common/errors/app-exception.js';
import { PasswordGate, type PasswordAttempt } from '../password-gate.js';
import { hashPassword } from '../passwords.js';
import { ProviderProblem, discoverProvider } from './oidc-client.js';
import { SsoConnectionsService, type UsableSsoConnection } from './sso-connections.service.js';
import { SsoDomainsService } from './sso-domains.service.js';
import { InviteAcceptanceService } from '../../team/invite-acceptance.service.js';
import { UsersService } from '../../users/users.service.js';
import { trustOrganizationId } from '../../common/access/tenant-id.js';

/** Start to callback: long enough for a password and a second factor at the provider. */
export const SSO_ATTEMPT_TTL_SECONDS = 10 * 60;
/** Callback to the password that links the account. */
const LINK_TTL_SECONDS = 10 * 60;
/** Provider metadata is re-fetched this often, and whenever the connection changes. */
const PROVIDER_CACHE_MS = 10 * 60 * 1000;
const PROVIDER_CACHE_SIZE = 500;

export type SsoOutcome =
  | 'success'
  | 'not_configured'
  | 'provider_unavailable'
  | 'invalid_state'
  | 'provider_error'
  | 'code_rejected'
  | 'token_invalid'
  | 'email_missing'
  | 'email_unverified'
  | 'domain_not_allowed'
  | 'no_seat'
  | 'account_unavailable'
  | 'link_required'
  | 'link_refused';

/** Why a sign-in ended without a session: the page shows `title` and `message`, metrics count `outcome`. */
export class SsoSignInFailure extends Error {
  override readonly name = 'SsoSignInFailure';

  constructor(
    readonly outcome: Exclude<SsoOutcome, 'success'>,
    readonly status: number,
    readonly title: string,
    message: string,
  ) {
    super(message);
  }
}

export interface SsoSignedIn {
  readonly kind: 'signedIn';
  readonly userId: string;
  readonly organizationId: string;
  /** The CLI sign-in request to return to, when the sign-in started on the device-login page. */
  readonly cliSessionId: string | null;
  /** The account's password was given too (linking): the session is also a password sign-in. */
  readonly withPassword: boolean;
}

/**
 * The provider vouched for an address whose account exists and has not accepted this provider: the
 * account's owner links it by confirming with the account's password (`confirmLink`).
 */
export interface SsoLinkRequired {
  readonly kind: 'linkRequired';
  readonly linkToken: string;
  readonly email: string;
  readonly organizationName: string;
}

/** Who the provider says signed in: a verified address and the provider's subject for it. */
interface ProviderIdentity {
  readonly email: string;
  readonly subject: string;
}

type Admitted =
  { readonly kind: 'signedIn'; readonly userId: string } | { readonly kind: 'linkRequired'; readonly userId: string };

interface Attempt {
  organization_id: string;
  nonce: string;
  code_verifier: string;
  cli_session_id: string | null;
  expired: boolean;
}

const START_AGAIN = 'Start the sign-in again from the beginning.';

/**
 * OpenID Connect sign-in: authorization code with PKCE (S256), `state` bound to the browser by a
 * cookie and to a single-use attempt row, and `nonce` checked in the ID token. A verified e-mail
 * of an allowed domain signs in its account, creating it and its membership (default role, one
 * seat) when needed; every refusal leaves nothing behind.
 */
@Injectable()
export class SsoSignInService {
  private readonly logger = new Logger('SsoSignIn');
  private readonly providers = new Map<string, { fingerprint: string; config: oidc.Configuration; until: number }>();

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly connections: SsoConnectionsService,
    private readonly domains: SsoDomainsService,
    private readonly organizations: OrganizationsService,
    private readonly invites: InviteAcceptanceService,
    private readonly users: UsersService,
    private readonly audit: AuditService,
    private readonly metrics: Metrics,
    private readonly passwords: PasswordGate,
  ) {}

  /** The provider's authorization URL for a new attempt, and the `state` the browser must bring back. */
  async start(
    slug: string,
    options: { loginHint?: string; cliSessionId?: string },
  ): Promise<{ redirectTo: string; state: string }> {
    try {
      const connection = await this.connections.usable({ slug });
      if (!connection) {
        throw new SsoSignInFailure(
          'not_configured',
          404,
          'Single sign-on is not available',
          'This organization has no single sign-on connection. Sign in with your e-mail address and password, or ask an administrator.',
        );
      }
      const provider = await this.provider(connection);
      const state = oidc.randomState();
      const nonce = oidc.randomNonce();
      const verifier = oidc.randomPKCECodeVerifier();
      await this.dataSource.query(`DELETE FROM sso_login_attempts WHERE expires_at <= now()`);
      await this.dataSource.query(
        `INSERT INTO sso_login_attempts (state_hash, organization_id, nonce, code_verifier, cli_session_id, expires_at)
         VALUES ($1, $2, $3, $4, $5, now() + make_interval(secs => $6))`,
        [
          sha256Hex(state),
          connection.organizationId,
          nonce,
          verifier,
          options.cliSessionId ?? null,
          SSO_ATTEMPT_TTL_SECONDS,
        ],
      );
      const url = oidc.buildAuthorizationUrl(provider, {
        redirect_uri: this.connections.redirectUri,
        response_type: 'code',
        scope: 'openid email profile',
        state,
        nonce,
        code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
        ...(options.loginHint ? { login_hint: options.loginHint } : {}),
      });
      return { redirectTo: url.href, state };
    } catch (error) {
      throw this.counted(error);
    }
  }

  /**
   * Handles the provider's redirect. `query` is the callback's raw query string, `browserState`
   * the state cookie set at start. The attempt is used up before anything else is checked, so a
   * callback can be tried once only.
   */
  async complete(
    query: string,
    browserState: string | undefined,
    ipAddress: string | null,
  ): Promise<SsoSignedIn | SsoLinkRequired> {
    try {
      const completed = await this.completeOrThrow(query, browserState, ipAddress);
      this.metrics.ssoSignIn(completed.kind === 'signedIn' ? 'success' : 'link_required');
      return completed;
    } catch (error) {
      throw this.counted(error);
    }
  }

  private async completeOrThrow(
    query: string,
    browserState: string | undefined,
    ipAddress: string | null,
  ): Promise<SsoSignedIn | SsoLinkRequired> {
    const params = new URLSearchParams(query);
    const state = params.get('state');
    if (!state || !browserState || !safeEqual(state, browserState)) {
      throw invalidState('the state parameter is missing or does not match this browser');
    }
    const attempts = await queryRows<Attempt>(
      this.dataSource,
      `DELETE FROM sso_login_attempts WHERE state_hash = $1
       RETURNING organization_id, nonce, code_verifier, cli_session_id, expires_at <= now() AS expired`,
      [sha256Hex(state)],
    );
    const attempt = attempts[0];
    if (!attempt) throw invalidState('no sign-in attempt has this state (unknown, or already used)');
    if (attempt.expired) throw invalidState('the sign-in attempt expired');
    const connection = await this.connectionStillUsable(attempt.organization_id);
    const provider = await this.provider(connection);
    const callbackUrl = new URL(this.connections.redirectUri);
    callbackUrl.search = params.toString();
    const claims = await this.verifiedClaims(provider, callbackUrl, attempt, state);
    const email = typeof claims.email === 'string' ? claims.email.trim() : '';
    if (!email || email.length > 254 || !/^[^\s@]+@[^\s@]+$/.test(email)) {
      throw new SsoSignInFailure(
        'email_missing',
        403,
        'No e-mail address',
        'Your identity provider did not send an e-mail address. Ask your administrator to release the "email" claim to this application.',
      );
    }
    if (claims.email_verified !== true && claims.email_verified !== 'true') {
      throw new SsoSignInFailure(
        'email_unverified',
        403,
        'E-mail address not verified',
        `Your identity provider has not verified ${email}. Verify the address with your provider, then sign in again.`,
      );
    }
    const identity = { email, subject: typeof claims.sub === 'string' ? claims.sub : '' };
    const admitted = await this.admit(connection, identity, ipAddress, null);
    if (admitted.kind === 'signedIn') {
      return {
        kind: 'signedIn',
        userId: admitted.userId,
        organizationId: connection.organizationId,
        cliSessionId: attempt.cli_session_id,
        withPassword: false,
      };
    }
    const linkToken = randomSecret(32);
    await this.dataSource.query(`DELETE FROM sso_pending_links WHERE expires_at <= now()`);
    await this.dataSource.query(
      `INSERT INTO sso_pending_links (token_hash, user_id, organization_id, email, issuer, subject, cli_session_id, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, now() + make_interval(secs => $8))`,
      [
        sha256Hex(linkToken),
        admitted.userId,
        connection.organizationId,
        email,
        connection.issuer,
        identity.subject,
        attempt.cli_session_id,
        LINK_TTL_SECONDS,
      ],
    );
    const organization = await this.organizations.get(connection.organizationId);
    return { kind: 'linkRequired', linkToken, email, organizationName: organization.name };
  }

  /**
   * The account's owner accepts the organization's provider for their account by giving its
   * password on the page the callback showed. A wrong password keeps the link pending (until it
   * expires) and answers 401, which the sign-in failure limits count.
   */
  async confirmLink(
    linkToken: string,
    attempt: Omit<PasswordAttempt, 'email'>,
    ipAddress: string | null,
  ): Promise<SsoSignedIn> {
    try {
      const signedIn = await this.confirmLinkOrThrow(linkToken, attempt, ipAddress);
      this.metrics.ssoSignIn('success');
      return signedIn;
    } catch (error) {
      throw this.counted(error);
    }
  }

  /** The organization's connection when a sign-in comes back to it, or the page that says it is gone. */
  private async connectionStillUsable(organizationId: string): Promise<UsableSsoConnection> {
    const connection = await this.connections.usable({ organizationId });
    if (!connection) {
      throw new SsoSignInFailure(
        'not_configured',
        404,
        'Single sign-on is not available',
        "The organization's single sign-on connection was removed while you were signing in.",
      );
    }
    return connection;
  }

  /** What the link page shows for a pending link, while it is pending. */
  async pendingLink(linkToken: string): Promise<{ email: string; organizationName: string } | null> {
    const rows = await queryRows<{ email: string; organization_id: string }>(
      this.dataSource,
      `SELECT email, organization_id FROM sso_pending_links WHERE token_hash = $1 AND expires_at > now()`,
      [sha256Hex(linkToken)],
    );
    const row = rows[0];
    if (!row) return null;
    const organization = await this.organizations.get(row.organization_id);
    return { email: row.email, organizationName: organization.name };
  }

  private async confirmLinkOrThrow(
    linkToken: string,
    attempt: Omit<PasswordAttempt, 'email'>,
    ipAddress: string | null,
  ) {
    const rows = await queryRows<{
      user_id: string;
      organization_id: string;
      email: string;
      subject: string;
      cli_session_id: string | null;
    }>(
      this.dataSource,
      `SELECT user_id, organization_id, email, subject, cli_session_id FROM sso_pending_links
        WHERE token_hash = $1 AND expires_at > now()`,
      [sha256Hex(linkToken)],
    );
    const pending = rows[0];
    if (!pending) throw invalidState('the link request is unknown, used or expired');
    // The password is checked by the one password gate (decision 0066), with its failure budgets.
    const account = await this.passwords.check({ ...attempt, email: pending.email }).catch((error: unknown) => {
      if (error instanceof AppException && error.getStatus() === 429) {
        throw new SsoSignInFailure(
          'link_refused',
          429,
          'Too many attempts',
          'Too many failed sign-ins from this address. Try again later.',
        );
      }
      if (error instanceof AppException && error.getStatus() === 401) return null;
      throw error;
    });
    if (!account || account.id !== pending.user_id) {
      throw new SsoSignInFailure(
        'link_refused',
        401,
        'Wrong password',
        'The password is not the one of this account. Try again, or use "Forgot password" to set a new one.',
      );
    }
    const connection = await this.connectionStillUsable(pending.organization_id);
    const deleted = await queryRows<{ one: number }>(
      this.dataSource,
      `DELETE FROM sso_pending_links WHERE token_hash = $1 RETURNING 1 AS one`,
      [sha256Hex(linkToken)],
    );
    if (!deleted.length) throw invalidState('the link request was already used');
    const admitted = await this.admit(
      connection,
      { email: pending.email, subject: pending.subject },
      ipAddress,
      account.id,
    );
    if (admitted.kind !== 'signedIn') throw invalidState('the account could not be linked');
    return {
      kind: 'signedIn' as const,
      userId: admitted.userId,
      organizationId: connection.organizationId,
      cliSessionId: pending.cli_session_id,
      withPassword: true,
    };
  }

  /** Exchanges the code (PKCE verifier, state, nonce, issuer all checked) and returns the user's claims. */
  private async verifiedClaims(
    provider: oidc.Configuration,
    callbackUrl: URL,
    attempt: Attempt,
    state: string,
  ): Promise<Record<string, unknown>> {
    try {
      const tokens = await oidc.authorizationCodeGrant(provider, callbackUrl, {
        pkceCodeVerifier: attempt.code_verifier,
        expectedState: state,
        expectedNonce: attempt.nonce,
        idTokenExpected: true,
      });
      const idToken = tokens.claims();
      if (!idToken) throw new SsoSignInFailure('token_invalid', 502, 'Sign-in failed', 'No ID token was returned.');
      if (typeof idToken.email === 'string') return idToken;
      if (!provider.serverMetadata().userinfo_endpoint) return idToken;
      const userInfo = await oidc.fetchUserInfo(provider, tokens.access_token, idToken.sub);
      return { ...userInfo, ...idToken, email: userInfo.email, email_verified: userInfo.email_verified };
    } catch (error) {
      if (error instanceof SsoSignInFailure) throw error;
      if (error instanceof oidc.AuthorizationResponseError) {
        throw new SsoSignInFailure(
          'provider_error',
          401,
          'Sign-in not completed',
          `Your identity provider did not complete the sign-in (${error.error}). ${START_AGAIN}`,
        );
      }
      if (error instanceof oidc.ResponseBodyError) {
        throw new SsoSignInFailure(
          'code_rejected',
          401,
          'Sign-in code refused',
          `Your identity provider refused the sign-in code (${error.error}): it expired or was already used. ${START_AGAIN}`,
        );
      }
      if (error instanceof oidc.ClientError) {
        this.logger.warn(`SSO callback rejected: ${error.code ?? 'client error'}: ${error.message}`);
        throw new SsoSignInFailure(
          'token_invalid',
          401,
          'Sign-in could not be verified',
          `The answer from your identity provider could not be verified. ${START_AGAIN}`,
        );
      }
      throw providerUnavailable(error);
    }
  }

  /**
   * The one gate of every way an organization's provider signs someone in (the callback, the
   * device-login page's SSO, the link confirmation): the provider's word counts only for an
   * address of a domain its organization has verified, and it signs in
   * - a new address: a new account (its password random and unknown), joined with the default role;
   * - an account registered but never confirmed: taken over, its password replaced and the
   *   organization its sign-up made dropped, so whoever registered the address first gets nothing;
   * - an account the provider created, or whose owner linked the provider (here with
   *   `confirmedUserId`, after giving the password);
   * and no other account: those need their owner's link (`linkRequired`). Joining takes a seat
   * (or a pending invite's) under the organization's row lock; a refusal rolls everything back.
   */
  private async admit(
    connection: UsableSsoConnection,
    identity: ProviderIdentity,
    ipAddress: string | null,
    confirmedUserId: string | null,
  ): Promise<Admitted> {
    const { email } = identity;
    const unusablePassword = await hashPassword(randomSecret(32), this.config.bcryptRounds);
    return this.dataSource.transaction(async (manager) => {
      const organization = await this.organizations.get(connection.organizationId, { manager, lock: true });
      const domain = email.slice(email.lastIndexOf('@') + 1).toLowerCase();
      if (!(await this.domains.isVerified(connection.organizationId, domain, manager))) {
        throw new SsoSignInFailure(
          'domain_not_allowed',
          403,
          'E-mail domain not allowed',
          `Addresses at ${domain} may not sign in to this organization. Ask an administrator to add the domain to the single sign-on settings and verify it.`,
        );
      }
      const found = await this.users.findByEmail(email, { manager, lock: true });
      if (found && (found.status !== 'active' || found.isSuperAdmin)) {
        throw new SsoSignInFailure(
          'account_unavailable',
          403,
          'Account not available',
          found.isSuperAdmin
            ? 'Service administrators sign in with their password, not through an organization.'
            : 'This account is disabled or suspended.',
        );
      }
      let userId: string;
      if (!found) {
        userId = await this.users.create(manager, { email, passwordHash: unusablePassword, verified: true });
        await this.link(manager, userId, connection, identity, 'provider');
      } else if (!found.emailVerifiedAt) {
        // The identity provider vouches for the address now. Whatever a sign-up of the address
        // left (a password, the organization it made) must not keep working: both go.
        userId = found.id;
        await this.users.markVerified(manager, userId, unusablePassword);
        await this.organizations.dropSoleOwnedBy(userId, manager);
        await this.link(manager, userId, connection, identity, 'provider');
      } else if (confirmedUserId === found.id) {
        userId = found.id;
        await this.link(manager, userId, connection, identity, 'account');
      } else if (await this.isLinked(manager, found.id, connection.organizationId)) {
        userId = found.id;
      } else {
        return { kind: 'linkRequired', userId: found.id };
      }
      if ((await this.organizations.roleOf(connection.organizationId, userId, manager)) === null) {
        await this.join(manager, connection, organization.serviceTier, email, userId, ipAddress);
      }
      await this.users.recordSignIn(userId, manager);
      await this.audit.record(
        this.context(userId, email, connection.organizationId, ipAddress),
        {
          organizationId: connection.organizationId,
          action: 'user.login',
          resourceType: 'user',
          resourceId: userId,
          metadata: { method: 'sso', issuer: connection.issuer },
        },
        manager,
      );
      return { kind: 'signedIn', userId };
    });
  }

  private async isLinked(manager: EntityManager, userId: string, organizationId: string): Promise<boolean> {
    const rows = await queryRows<{ one: number }>(
      manager,
      `SELECT 1 AS one FROM sso_account_links WHERE user_id = $1 AND organization_id = $2`,
      [userId, organizationId],
    );
    return rows.length > 0;
  }

  /** Records that the organization's provider may sign the account in; by the account's owner, audited. */
  private async link(
    manager: EntityManager,
    userId: string,
    connection: UsableSsoConnection,
    identity: ProviderIdentity,
    createdBy: 'provider' | 'account',
  ): Promise<void> {
    await manager.query(
      `INSERT INTO sso_account_links (user_id, organization_id, issuer, subject, created_by)
       VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (user_id, organization_id) DO UPDATE
          SET issuer = EXCLUDED.issuer, subject = EXCLUDED.subject, created_by = EXCLUDED.created_by, created_at = now()`,
      [userId, connection.organizationId, connection.issuer, identity.subject, createdBy],
    );
    if (createdBy === 'account') {
      await this.audit.record(
        this.context(userId, identity.email, connection.organizationId, null),
        {
          organizationId: connection.organizationId,
          action: 'sso.account_linked',
          resourceType: 'user',
          resourceId: userId,
          metadata: { issuer: connection.issuer },
        },
        manager,
      );
    }
  }

  /**
   * Makes the person a member, with a pending invite's role or the connection's default one, when a
   * seat is free (a pending invite already holds one); creates their account when there is none.
   */
  private async join(
    manager: EntityManager,
    connection: UsableSsoConnection,
    serviceTier: string,
    email: string,
    userId: string,
    ipAddress: string | null,
  ): Promise<void> {
    const invite = await this.invites.pendingFor(connection.organizationId, email, manager);
    if (!invite) await this.assertSeatFree(manager, connection.organizationId, serviceTier);
    const role = invite?.role ?? connection.defaultRole;
    await this.organizations.addMember(connection.organizationId, userId, role, manager);
    if (invite) await this.invites.markAccepted(connection.organizationId, invite.id, userId, manager);
    await this.audit.record(
      this.context(userId, email, connection.organizationId, ipAddress),
      {
        organizationId: connection.organizationId,
        action: 'member.joined',
        resourceType: 'user',
        resourceId: userId,
        metadata: { email, role, method: 'sso', inviteId: invite?.id ?? null },
      },
      manager,
    );
  }

  private async assertSeatFree(manager: EntityManager, organizationId: string, serviceTier: string): Promise<void> {
    const limit = tierDefinition(serviceTier).limits.maxSeats;
    const used =
      (await this.organizations.memberCount(organizationId, manager)) +
      (await this.invites.pendingCount(organizationId, manager));
    if (used >= limit) {
      throw new SsoSignInFailure(
        'no_seat',
        403,
        'No seat available',
        `All ${limit} seats of this organization's plan are taken, so your account could not be added. Ask an administrator to free a seat or upgrade the plan, then sign in again.`,
      );
    }
  }

  private context(userId: string, email: string, organizationId: string, ipAddress: string | null) {
    const caller: SessionCaller = { kind: 'session', userId, email, isSuperAdmin: false, role: null };
    return { caller, organizationId: trustOrganizationId(organizationId), ipAddress };
  }

  /** The provider's configuration, discovered once per connection version and kept a while. */
  private async provider(connection: UsableSsoConnection): Promise<oidc.Configuration> {
    const fingerprint = `${connection.issuer}\n${connection.clientId}\n${connection.updatedAt.getTime()}`;
    const cached = this.providers.get(connection.organizationId);
    if (cached && cached.fingerprint === fingerprint && cached.until > Date.now()) return cached.config;
    let config: oidc.Configuration;
    try {
      config = await discoverProvider(connection, this.config.webhookAllowPrivateNetworks);
    } catch (error) {
      throw providerUnavailable(error);
    }
    this.providers.delete(connection.organizationId);
    if (this.providers.size >= PROVIDER_CACHE_SIZE) this.providers.delete(this.providers.keys().next().value!);
    this.providers.set(connection.organizationId, { fingerprint, config, until: Date.now() + PROVIDER_CACHE_MS });
    return config;
  }

  private counted(error: unknown): unknown {
    if (error instanceof SsoSignInFailure) {
      this.metrics.ssoSignIn(error.outcome);
      if (error.outcome === 'provider_unavailable')
        this.logger.warn(`SSO provider unavailable: ${String(error.cause)}`);
    }
    return error;
  }
}

function invalidState(reason: string): SsoSignInFailure {
  return new SsoSignInFailure(
    'invalid_state',
    400,
    'Sign-in link invalid or expired',
    `This sign-in cannot be completed: ${reason}. ${START_AGAIN}`,
  );
}

function providerUnavailable(error: unknown): SsoSignInFailure {
  const failure = new SsoSignInFailure(
    'provider_unavailable',
    502,
    'Identity provider unavailable',
    'Your identity provider could not be reached or answered unexpectedly. Try again in a moment, or ask an administrator to check the single sign-on settings.',
  );
  (failure as { cause?: unknown }).cause =
    error instanceof ProviderProblem || error instanceof Error ? error.message : String(error);
  return failure;
}
