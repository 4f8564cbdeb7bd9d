import { Body, Controller, Get, HttpCode, Inject, Post, Query, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { Public } from '../../common/access/access.decorator.js';
import { RateLimit } from '../../rate-limit/rate-limit.guard.js';
import type { AppConfig } from '../../config/app-config.js';
import { APP_CONFIG } from '../../config/config.module.js';
import { cliSessionIdOf } from '../device-login/device-login.service.js';
import { DEVICE_COOKIE, cookieValueOf } from '../device-cookie.js';
import { SsoConnectionsService } from './sso-connections.service.js';
import { sendPage } from '../device-login/device-pages.js';
import {
  SSO_ATTEMPT_TTL_SECONDS,
  SsoSignInFailure,
  SsoSignInService,
  type SsoSignedIn,
} from './sso-sign-in.service.js';
import { SsoDomainsService } from './sso-domains.service.js';
import { OrganizationsService } from '../../organizations/organizations.service.js';
import { PASSWORD_SIGN_IN, mergeSignIn, ssoSignIn } from '../session/session-admission.js';
import { startSignedInSession } from '../session/signed-in-session.js';
import { SsoDiscoverDto } from './sso.dto.js';

/** Carries `state` from start to callback in the browser that started the sign-in. */
export const SSO_STATE_COOKIE = 'attestly.sso_state';
const CALLBACK_PATH = '/api/v1/auth/sso/callback';
const SLUG = /^[a-z0-9][a-z0-9-]{0,99}$/;

/**
 * Single sign-on through the organization's OpenID Connect provider. Start and callback are
 * browser navigations and answer redirects or pages, never JSON envelopes; the forms those pages
 * post (`/sso/start`, `/sso/link`) live outside /api, which takes JSON bodies only.
 */
@Controller()
export class SsoSignInController {
  private readonly secureCookie: boolean;
  private readonly serviceOrigin: string;

  constructor(
    private readonly signIn: SsoSignInService,
    private readonly connections: SsoConnectionsService,
    private readonly domains: SsoDomainsService,
    private readonly organizations: OrganizationsService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    this.secureCookie = config.baseUrl.startsWith('https:');
    this.serviceOrigin = new URL(config.baseUrl).origin;
  }

  /**
   * Where an address signs in: the start URL of the organization that verified its domain, or
   * `sso: false` (a domain merely listed routes nobody). Same shape either way, and nothing about whether the address
   * has an account.
   */
  @Post('api/v1/auth/sso/discover')
  @RateLimit('sso-ip')
  @Public()
  @HttpCode(200)
  async discover(@Body() body: SsoDiscoverDto) {
    const slug = await this.domains.organizationSlugForEmail(body.email);
    return {
      sso: slug !== null,
      startUrl: slug === null ? null : this.startUrl(slug, body.email),
    };
  }

  /**
   * Starts a sign-in at the organization's provider. A navigation the person made on this site,
   * or typed (`Sec-Fetch-Site: same-origin` or `none`), goes straight on; any other (another
   * site's page, or a browser that does not say) first shows a page asking whether to continue,
   * whose same-origin post starts it: a foreign page cannot sign a browser in (login CSRF).
   */
  @Get('api/v1/auth/sso/start')
  @RateLimit('sso-ip')
  @Public()
  async start(
    @Req() request: Request,
    @Res() response: Response,
    @Query('org') org?: unknown,
    @Query('login_hint') loginHint?: unknown,
    @Query('cli_session_id') cliSessionId?: unknown,
  ) {
    const parsed = startFields(org, loginHint, cliSessionId);
    if (!parsed) return invalidStartLink(response);
    const site = request.headers['sec-fetch-site'];
    if (site === 'same-origin' || site === 'none') return this.begin(response, parsed, 'redirect');
    const connection = await this.connections.usable({ slug: parsed.org });
    if (!connection) {
      return this.failed(
        response,
        new SsoSignInFailure(
          'not_configured',
          404,
          'Single sign-on is not available',
          'This organization has no single sign-on connection. Sign in with your e-mail address and password, or ask an administrator.',
        ),
      );
    }
    const organization = await this.organizations.get(connection.organizationId);
    const fields: Record<string, string> = { org: parsed.org };
    if (parsed.loginHint) fields.login_hint = parsed.loginHint;
    if (parsed.cliSessionId) fields.cli_session_id = parsed.cliSessionId;
    sendPage(response, 200, { kind: 'ssoConfirm', organizationName: organization.name, fields });
  }

  /** The confirmation page's post: starts the sign-in when the form came from this service. */
  @Post('sso/start')
  @RateLimit('sso-ip')
  @Public()
  async confirmStart(@Req() request: Request, @Res() response: Response) {
    const body = (request.body ?? {}) as Record<string, unknown>;
    const parsed = startFields(body.org, body.login_hint, body.cli_session_id);
    if (!parsed) return invalidStartLink(response);
    const origin = request.headers.origin;
    const sameOrigin =
      origin !== undefined ? origin === this.serviceOrigin : request.headers['sec-fetch-site'] === 'same-origin';
    if (!sameOrigin) {
      return sendPage(response, 403, {
        kind: 'message',
        tone: 'error',
        title: 'Request refused',
        message: 'This form was posted from another site.',
      });
    }
    return this.begin(response, parsed, 'page');
  }

  @Get('api/v1/auth/sso/callback')
  @Public()
  async callback(@Req() request: Request, @Res() response: Response) {
    response.clearCookie(SSO_STATE_COOKIE, { path: CALLBACK_PATH });
    const query = request.originalUrl.includes('?')
      ? request.originalUrl.slice(request.originalUrl.indexOf('?') + 1)
      : '';
    try {
      const completed = await this.signIn.complete(query, stateCookie(request), request.ip ?? null);
      if (completed.kind === 'linkRequired') {
        return sendPage(response, 200, {
          kind: 'ssoLink',
          organizationName: completed.organizationName,
          email: completed.email,
          linkToken: completed.linkToken,
        });
      }
      await this.signedIn(request, response, completed);
    } catch (error) {
      if (error instanceof SsoSignInFailure) return this.failed(response, error);
      throw error;
    }
  }

  /** The link page's post: the account's password accepts the provider for the account, and signs in. */
  @Post('sso/link')
  @Public()
  async link(@Req() request: Request, @Res() response: Response) {
    const body = (request.body ?? {}) as Record<string, unknown>;
    const linkToken = typeof body.link_token === 'string' ? body.link_token : '';
    const password = typeof body.password === 'string' ? body.password : '';
    if (!linkToken || linkToken.length > 100) {
      return this.failed(
        response,
        new SsoSignInFailure('invalid_state', 400, 'Sign-in link invalid or expired', 'Start the sign-in again.'),
      );
    }
    try {
      await this.signedIn(
        request,
        response,
        await this.signIn.confirmLink(
          linkToken,
          { password, clientIp: request.ip, deviceCookie: cookieValueOf(request.headers.cookie, DEVICE_COOKIE) },
          request.ip ?? null,
        ),
      );
    } catch (error) {
      if (error instanceof SsoSignInFailure && error.outcome === 'link_refused') {
        const pending = await this.signIn.pendingLink(linkToken);
        if (pending) {
          return sendPage(response, error.status, { kind: 'ssoLink', ...pending, linkToken, error: error.message });
        }
      }
      if (error instanceof SsoSignInFailure) return this.failed(response, error);
      throw error;
    }
  }

  /** A session confined to the organization whose provider made it (and a password session too after linking). */
  private async signedIn(request: Request, response: Response, signedIn: SsoSignedIn): Promise<void> {
    const signIn = ssoSignIn(signedIn.organizationId);
    await startSignedInSession(
      request,
      signedIn.userId,
      signedIn.organizationId,
      signedIn.withPassword ? mergeSignIn(PASSWORD_SIGN_IN, signIn) : signIn,
    );
    const destination = signedIn.cliSessionId
      ? `${this.config.baseUrl}/device?session_id=${encodeURIComponent(signedIn.cliSessionId)}`
      : `${this.config.dashboardOrigins[0] ?? this.config.baseUrl}/`;
    response.set('Cache-Control', 'no-store').redirect(303, destination);
  }

  /** Creates the attempt, sets the state cookie, and sends the browser to the provider. */
  private async begin(response: Response, fields: StartFields, answer: 'redirect' | 'page'): Promise<void> {
    try {
      const { redirectTo, state } = await this.signIn.start(fields.org, {
        loginHint: fields.loginHint,
        cliSessionId: fields.cliSessionId,
      });
      response.cookie(SSO_STATE_COOKIE, state, {
        httpOnly: true,
        // Lax: the provider's redirect back is a top-level navigation from another site.
        sameSite: 'lax',
        secure: this.secureCookie,
        path: CALLBACK_PATH,
        maxAge: SSO_ATTEMPT_TTL_SECONDS * 1000,
      });
      if (answer === 'redirect') return response.set('Cache-Control', 'no-store').redirect(303, redirectTo);
      // A form's post may not redirect to another site under the page's `form-action 'self'`.
      sendPage(response, 200, {
        kind: 'continue',
        title: 'Continuing to single sign-on',
        message: "Taking you to your organization's identity provider.",
        path: redirectTo,
      });
    } catch (error) {
      if (error instanceof SsoSignInFailure) return this.failed(response, error);
      throw error;
    }
  }

  private startUrl(slug: string, email: string): string {
    const query = new URLSearchParams({ org: slug, login_hint: email });
    return `${this.config.baseUrl}/api/v1/auth/sso/start?${query.toString()}`;
  }

  private failed(response: Response, failure: SsoSignInFailure): void {
    sendPage(response, failure.status, {
      kind: 'message',
      tone: 'error',
      title: failure.title,
      message: failure.message,
    });
  }
}

interface StartFields {
  readonly org: string;
  readonly loginHint?: string;
  readonly cliSessionId?: string;
}

function startFields(org: unknown, loginHint: unknown, cliSessionId: unknown): StartFields | null {
  if (typeof org !== 'string' || !SLUG.test(org)) return null;
  return {
    org,
    loginHint: typeof loginHint === 'string' && loginHint.length <= 254 ? loginHint : undefined,
    cliSessionId: cliSessionIdOf(cliSessionId) ?? undefined,
  };
}

function invalidStartLink(response: Response): void {
  sendPage(response, 400, {
    kind: 'message',
    tone: 'error',
    title: 'Invalid sign-in link',
    message: 'The link does not name an organization. Enter your work e-mail address on the sign-in page instead.',
  });
}

/** The state cookie, read by hand: the service has no cookie parser beyond the session's. */
function stateCookie(request: Request): string | undefined {
  for (const part of (request.headers.cookie ?? '').split(';')) {
    const separator = part.indexOf('=');
    if (separator > 0 && part.slice(0, separator).trim() === SSO_STATE_COOKIE) {
      try {
        return decodeURIComponent(part.slice(separator + 1).trim());
      } catch {
        return undefined;
      }
    }
  }
  return undefined;
}
