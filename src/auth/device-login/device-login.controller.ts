import { Controller, Get, Inject, Post, Query, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { Public } from '../../common/access/access.decorator.js';
import type { OrgAuthContext } from '../../common/access/auth-context.js';
import { randomSecret } from '../../common/crypto.js';
import { AppException } from '../../common/errors/app-exception.js';
import type { AppConfig } from '../../config/app-config.js';
import { APP_CONFIG } from '../../config/config.module.js';
import { AuthService } from '../auth.service.js';
import { PasswordGate } from '../password-gate.js';
import { CliSessionsService } from '../cli-login/cli-sessions.service.js';
import { SessionResolver, type ResolvedSession } from '../session-resolver.js';
import { SESSION_COOKIE, destroySession, saveSession } from '../../common/http/session-cookie.js';
import { PASSWORD_SIGN_IN, signInOf } from '../session/session-admission.js';
import { startSignedInSession } from '../session/signed-in-session.js';
import { DeviceLoginService, cliSessionIdOf } from './device-login.service.js';
import { sendPage, type DevicePage } from './device-pages.js';

const RUN_LOGIN_AGAIN = 'Run the login command again to get a new link.';

/**
 * The page a CLI session's `verification_url` opens: sign in if needed, review the request,
 * approve or deny it. Server-rendered HTML with form posts; every state-changing form carries a
 * token bound to the dashboard session, on top of the global Origin check for cookie requests.
 * The routes are public to the access guard because they answer with pages, not 401 envelopes:
 * each resolves the session itself.
 */
@Controller('device')
@Public()
export class DeviceLoginController {
  private readonly serviceOrigin: string;

  constructor(
    private readonly auth: AuthService,
    private readonly cliSessions: CliSessionsService,
    private readonly sessions: SessionResolver,
    private readonly deviceLogin: DeviceLoginService,
    private readonly passwords: PasswordGate,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.serviceOrigin = new URL(config.baseUrl).origin;
  }

  @Get()
  async show(@Req() request: Request, @Res() response: Response, @Query('session_id') rawSessionId?: unknown) {
    const sessionId = cliSessionIdOf(rawSessionId);
    if (!sessionId) return this.invalidLink(response);
    await this.review(request, response, sessionId, await this.sessions.resolve(request));
  }

  /**
   * Signs in through the same password gate as POST /api/v1/auth/login (failed sign-ins per
   * account, known browser and address); a refusal answers with the page.
   */
  @Post('login')
  async login(@Req() request: Request, @Res() response: Response) {
    const sessionId = cliSessionIdOf(field(request, 'session_id'));
    if (!sessionId) return this.invalidLink(response);
    if (!this.sameOrigin(request)) return this.crossSite(response);
    const email = field(request, 'email')?.trim() ?? '';
    const password = field(request, 'password') ?? '';
    if (!email || !password) {
      return this.render(response, 400, {
        kind: 'signIn',
        sessionId,
        email,
        error: 'Enter your e-mail address and password.',
      });
    }
    try {
      const { user, deviceCookie } = await this.auth.login(this.passwords.attemptOf(request, email, password));
      this.passwords.setDeviceCookie(response, deviceCookie);
      const organizationId = await this.auth.defaultOrganization(user.id);
      // As POST /api/v1/auth/login: a new session id at sign-in defeats session fixation.
      await startSignedInSession(request, user.id, organizationId, PASSWORD_SIGN_IN, {
        deviceCsrfToken: randomSecret(32),
      });
      await this.auth.recordLogin(user.id, organizationId, request.ip ?? null);
    } catch (error) {
      if (!isClientError(error)) throw error;
      for (const [name, value] of Object.entries(error.details.headers ?? {})) response.setHeader(name, value);
      return this.render(response, error.getStatus(), { kind: 'signIn', sessionId, email, error: error.message });
    }
    response.redirect(303, pageOf(sessionId));
  }

  @Post('approve')
  approve(@Req() request: Request, @Res() response: Response) {
    return this.decide(request, response, true);
  }

  @Post('deny')
  deny(@Req() request: Request, @Res() response: Response) {
    return this.decide(request, response, false);
  }

  /** Switches the session's organization (as POST /api/v1/auth/switch-org) and shows the request again. */
  @Post('organization')
  async organization(@Req() request: Request, @Res() response: Response) {
    const checked = await this.checkedForm(request, response);
    if (!checked) return;
    try {
      const organization = await this.auth.organizationToSwitchTo(
        checked.resolved.caller,
        field(request, 'slug') ?? '',
        signInOf(request.session),
      );
      request.session.organizationId = organization.id;
      await saveSession(request);
    } catch (error) {
      if (!isClientError(error)) throw error;
      return this.message(response, error.getStatus(), 'error', 'Organization not available', error.message);
    }
    response.redirect(303, pageOf(checked.sessionId));
  }

  @Post('logout')
  async logout(@Req() request: Request, @Res() response: Response) {
    const checked = await this.checkedForm(request, response);
    if (!checked) return;
    await destroySession(request);
    response.clearCookie(SESSION_COOKIE, { path: '/' });
    response.redirect(303, pageOf(checked.sessionId));
  }

  private async decide(request: Request, response: Response, approve: boolean): Promise<void> {
    const checked = await this.checkedForm(request, response);
    if (!checked) return;
    const { sessionId, resolved } = checked;
    if (!resolved.organizationId || !resolved.caller.role) {
      return this.review(request, response, sessionId, resolved);
    }
    const auth: OrgAuthContext = {
      caller: resolved.caller,
      organizationId: resolved.organizationId,
      ipAddress: request.ip ?? null,
    };
    try {
      await this.cliSessions.decide(auth, sessionId, approve);
    } catch (error) {
      if (!isClientError(error)) throw error;
      return this.message(
        response,
        error.getStatus(),
        'error',
        'Nothing was changed',
        `${error.message}. ${RUN_LOGIN_AGAIN}`,
      );
    }
    const organization = await this.deviceLogin.organization(resolved.organizationId);
    if (approve) {
      return this.message(
        response,
        200,
        'success',
        'Command-line sign-in approved',
        `The command-line client is now signed in to ${organization?.name ?? 'your organization'} as ${resolved.caller.email}. You can close this window and return to your terminal.`,
      );
    }
    this.message(
      response,
      200,
      'info',
      'Command-line sign-in denied',
      'The command-line client was not signed in. You can close this window.',
    );
  }

  /**
   * The common checks of the signed-in forms: a well-formed session id, a same-origin post, a
   * live dashboard session and its form token. Answers the page itself when one fails.
   */
  private async checkedForm(
    request: Request,
    response: Response,
  ): Promise<{ sessionId: string; resolved: ResolvedSession } | null> {
    const sessionId = cliSessionIdOf(field(request, 'session_id'));
    if (!sessionId) {
      this.invalidLink(response);
      return null;
    }
    if (!this.sameOrigin(request)) {
      this.crossSite(response);
      return null;
    }
    const resolved = await this.sessions.resolve(request);
    if (!resolved) {
      this.render(response, 401, {
        kind: 'signIn',
        sessionId,
        error: 'You are signed out. Sign in again to continue.',
      });
      return null;
    }
    if (!this.deviceLogin.validCsrfToken(request, field(request, 'csrf_token'))) {
      this.message(response, 403, 'error', 'The form has expired', 'Go back, reload the page and try again.');
      return null;
    }
    return { sessionId, resolved };
  }

  /** The page for a request: sign-in, the organization choice, the review, or why there is nothing to do. */
  private async review(request: Request, response: Response, sessionId: string, resolved: ResolvedSession | null) {
    const cli = await this.deviceLogin.cliSession(sessionId);
    if (!cli) {
      return this.message(
        response,
        404,
        'error',
        'Unknown sign-in request',
        `This sign-in request does not exist. ${RUN_LOGIN_AGAIN}`,
      );
    }
    if (!resolved) return this.render(response, 200, { kind: 'signIn', sessionId });
    if (cli.status !== 'pending') {
      const decided = cli.status === 'denied' ? 'denied' : 'approved';
      return this.message(
        response,
        409,
        'info',
        `Already ${decided}`,
        `This sign-in request has already been ${decided}.`,
      );
    }
    if (cli.expired) {
      return this.message(
        response,
        410,
        'error',
        'Sign-in request expired',
        `This sign-in request has expired. ${RUN_LOGIN_AGAIN}`,
      );
    }
    const csrfToken = await this.deviceLogin.csrfToken(request);
    const email = resolved.caller.email;
    const organizations = await this.auth.organizationsOf(
      resolved.caller,
      resolved.organizationId,
      signInOf(request.session),
    );
    const current = resolved.caller.role ? organizations.find((organization) => organization.isActive) : undefined;
    // A super admin may act in every organization: listing them all would not be a choice.
    const choices = resolved.caller.isSuperAdmin ? [] : organizations.map(({ name, slug }) => ({ name, slug }));
    if (!current) {
      return this.render(response, 200, {
        kind: 'chooseOrganization',
        sessionId,
        csrfToken,
        email,
        organizations: choices,
      });
    }
    this.render(response, 200, {
      kind: 'confirm',
      sessionId,
      csrfToken,
      email,
      organization: { name: current.name, slug: current.slug },
      userCode: cli.userCode,
      expiresAt: cli.expiresAt,
      now: new Date(),
      otherOrganizations: choices.filter((choice) => choice.slug !== current.slug),
    });
  }

  /** Refuses a form posted from another site (a browser always sends Origin on a cross-site POST). */
  private sameOrigin(request: Request): boolean {
    const origin = request.headers.origin;
    return origin === undefined || origin === this.serviceOrigin;
  }

  private invalidLink(response: Response): void {
    this.message(
      response,
      400,
      'error',
      'Invalid sign-in link',
      `This link is incomplete or damaged. ${RUN_LOGIN_AGAIN}`,
    );
  }

  private crossSite(response: Response): void {
    this.message(response, 403, 'error', 'Request refused', 'This form was posted from another site.');
  }

  private message(
    response: Response,
    status: number,
    tone: 'success' | 'error' | 'info',
    title: string,
    message: string,
  ): void {
    this.render(response, status, { kind: 'message', tone, title, message });
  }

  private render(response: Response, status: number, page: DevicePage): void {
    sendPage(response, status, page);
  }
}

function pageOf(sessionId: string): string {
  return `/device?session_id=${encodeURIComponent(sessionId)}`;
}

/** One string field of the posted form (urlencoded or JSON); repeated or non-string fields count as absent. */
function field(request: Request, name: string): string | undefined {
  const body = request.body as Record<string, unknown> | undefined;
  const value = body && typeof body === 'object' ? body[name] : undefined;
  return typeof value === 'string' ? value : undefined;
}

function isClientError(error: unknown): error is AppException {
  return error instanceof AppException && error.getStatus() < 500;
}
