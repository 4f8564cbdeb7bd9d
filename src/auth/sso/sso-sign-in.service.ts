import { Inject, Injectable, Logger } from '@nestjs/common';
import * as oidc from 'openid-client';
import type { SessionCaller } from '../../common/access/auth-context.js';
import { randomSecret, safeEqual, sha256Hex } from '../../common/crypto.js';
import { tierDefinition } from '../../common/tiers.js';
import type { AppConfig } from '../../config/app-config.js';
import { APP_CONFIG } from '../../config/config.module.js';
import { AuditService } from '../../audit/audit.service.js';
import { UnitOfWork } from '../../database/unit-of-work.js';
import { Metrics } from '../../metrics/metrics.js';
import { OrganizationsService } from '../../organizations/organizations.service.js';
import { AppException } from '../../common/errors/app-exception.js';
import { PasswordGate, type PasswordAttempt } from '../password-gate.js';
import { hashPassword } from '../passwords.js';
import { ProviderProblem, discoverProvider } from './oidc-client.js';
import { SsoConnectionsService, type UsableSsoConnection } from './sso-connections.service.js';
import { SsoDomainsService } from './sso-domains.service.js';
import { SsoSignInRepository, type SsoAttempt } from './sso-sign-in.repository.js';
import { InviteAcceptanceService } from '../../team/invite-acceptance.service.js';
import { UsersService } from '../../users/users.service.js';
import type { OrganizationId } from '../../common/access/tenant-id.js';

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
    private readonly uow: UnitOfWork,
    private readonly records: SsoSignInRepository,
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
      await this.records.insertAttempt(
        sha256Hex(state),
        {
          organizationId: connection.organizationId,
          nonce,
          codeVerifier: verifier,
          cliSessionId: options.cliSessionId ?? null,
        },
        SSO_ATTEMPT_TTL_SECONDS,
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
   * the state cookie set at start. Once the state matches this browser's cookie, the attempt is
   * used up before anything else is checked, so a callback can be tried once only (a state that
   * does not match the cookie leaves the attempt to the browser that started it).
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
    const attempt = await this.records.takeAttempt(sha256Hex(state));
    if (!attempt) throw invalidState('no sign-in attempt has this state (unknown, or already used)');
    if (attempt.expired) throw invalidState('the sign-in attempt expired');
    const connection = await this.connectionStillUsable(attempt.organizationId);
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
        cliSessionId: attempt.cliSessionId,
        withPassword: false,
      };
    }
    const linkToken = randomSecret(32);
    await this.records.insertPendingLink(
      sha256Hex(linkToken),
      {
        userId: admitted.userId,
        organizationId: connection.organizationId,
        email,
        issuer: connection.issuer,
        subject: identity.subject,
        cliSessionId: attempt.cliSessionId,
      },
      LINK_TTL_SECONDS,
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
  private async connectionStillUsable(organizationId: OrganizationId): Promise<UsableSsoConnection> {
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
    const pending = await this.records.findPendingLink(sha256Hex(linkToken));
    if (!pending) return null;
    const organization = await this.organizations.get(pending.organizationId);
    return { email: pending.email, organizationName: organization.name };
  }

  private async confirmLinkOrThrow(
    linkToken: string,
    attempt: Omit<PasswordAttempt, 'email'>,
    ipAddress: string | null,
  ) {
    const pending = await this.records.findPendingLink(sha256Hex(linkToken));
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
    if (!account || account.id !== pending.userId) {
      throw new SsoSignInFailure(
        'link_refused',
        401,
        'Wrong password',
        'The password is not the one of this account. Try again, or use "Forgot password" to set a new one.',
      );
    }
    const connection = await this.connectionStillUsable(pending.organizationId);
    if (!(await this.records.deletePendingLink(sha256Hex(linkToken)))) {
      throw invalidState('the link request was already used');
    }
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
      cliSessionId: pending.cliSessionId,
      withPassword: true,
    };
  }

  /** Exchanges the code (PKCE verifier, state, nonce, issuer all checked) and returns the user's claims. */
  private async verifiedClaims(
    provider: oidc.Configuration,
    callbackUrl: URL,
    attempt: SsoAttempt,
    state: string,
  ): Promise<Record<string, unknown>> {
    try {
      const tokens = await oidc.authorizationCodeGrant(provider, callbackUrl, {
        pkceCodeVerifier: attempt.codeVerifier,
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
    return this.uow.run(async () => {
      const organization = await this.organizations.get(connection.organizationId, { lock: true });
      const domain = email.slice(email.lastIndexOf('@') + 1).toLowerCase();
      if (!(await this.domains.isVerified(connection.organizationId, domain))) {
        throw new SsoSignInFailure(
          'domain_not_allowed',
          403,
          'E-mail domain not allowed',
          `Addresses at ${domain} may not sign in to this organization. Ask an administrator to add the domain to the single sign-on settings and verify it.`,
        );
      }
      const found = await this.users.findByEmail(email, { lock: true });
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
        userId = await this.users.create({ email, passwordHash: unusablePassword, verified: true });
        await this.link(userId, connection, identity, 'provider');
      } else if (!found.emailVerifiedAt) {
        // The identity provider vouches for the address now. Whatever a sign-up of the address
        // left (a password, the organization it made) must not keep working: both go.
        userId = found.id;
        await this.users.markVerified(userId, unusablePassword);
        await this.organizations.dropSoleOwnedBy(userId);
        await this.link(userId, connection, identity, 'provider');
      } else if (confirmedUserId === found.id) {
        userId = found.id;
        await this.link(userId, connection, identity, 'account');
      } else if (await this.records.isLinked(found.id, connection.organizationId)) {
        userId = found.id;
      } else {
        return { kind: 'linkRequired', userId: found.id };
      }
      if ((await this.organizations.roleOf(connection.organizationId, userId)) === null) {
        await this.join(connection, organization.serviceTier, email, userId, ipAddress);
      }
      await this.users.recordSignIn(userId);
      await this.audit.record(this.context(userId, email, connection.organizationId, ipAddress), {
        organizationId: connection.organizationId,
        action: 'user.login',
        resourceType: 'user',
        resourceId: userId,
        metadata: { method: 'sso', issuer: connection.issuer },
      });
      return { kind: 'signedIn', userId };
    });
  }

  /** Records that the organization's provider may sign the account in; by the account's owner, audited. */
  private async link(
    userId: string,
    connection: UsableSsoConnection,
    identity: ProviderIdentity,
    createdBy: 'provider' | 'account',
  ): Promise<void> {
    await this.records.link(userId, connection.organizationId, connection.issuer, identity.subject, createdBy);
    if (createdBy === 'account') {
      await this.audit.record(this.context(userId, identity.email, connection.organizationId, null), {
        organizationId: connection.organizationId,
        action: 'sso.account_linked',
        resourceType: 'user',
        resourceId: userId,
        metadata: { issuer: connection.issuer },
      });
    }
  }

  /**
   * Makes the person a member, with a pending invite's role or the connection's default one, when a
   * seat is free (a pending invite already holds one); creates their account when there is none.
   */
  private async join(
    connection: UsableSsoConnection,
    serviceTier: string,
    email: string,
    userId: string,
    ipAddress: string | null,
  ): Promise<void> {
    const invite = await this.invites.pendingFor(connection.organizationId, email);
    if (!invite) await this.assertSeatFree(connection.organizationId, serviceTier);
    const role = invite?.role ?? connection.defaultRole;
    await this.organizations.addMember(connection.organizationId, userId, role);
    if (invite) await this.invites.markAccepted(connection.organizationId, invite.id, userId);
    await this.audit.record(this.context(userId, email, connection.organizationId, ipAddress), {
      organizationId: connection.organizationId,
      action: 'member.joined',
      resourceType: 'user',
      resourceId: userId,
      metadata: { email, role, method: 'sso', inviteId: invite?.id ?? null },
    });
  }

  private async assertSeatFree(organizationId: OrganizationId, serviceTier: string): Promise<void> {
    const limit = tierDefinition(serviceTier).limits.maxSeats;
    const used =
      (await this.organizations.memberCount(organizationId)) + (await this.invites.pendingCount(organizationId));
    if (used >= limit) {
      throw new SsoSignInFailure(
        'no_seat',
        403,
        'No seat available',
        `All ${limit} seats of this organization's plan are taken, so your account could not be added. Ask an administrator to free a seat or upgrade the plan, then sign in again.`,
      );
    }
  }

  private context(userId: string, email: string, organizationId: OrganizationId, ipAddress: string | null) {
    const caller: SessionCaller = { kind: 'session', userId, email, isSuperAdmin: false, role: null };
    return { caller, organizationId, ipAddress };
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
