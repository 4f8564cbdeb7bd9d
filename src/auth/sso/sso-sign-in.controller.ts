import { Body, Controller, Get, HttpCode, Inject, Post, Query, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { Public } from '../../common/access/access.decorator.js';
import { RateLimit } from '../../rate-limit/rate-limit.guard.js';
import type { AppConfig } from '../../config/app-config.js';
import { APP_CONFIG } from '../../config/config.module.js';
import { cliSessionIdOf } from '../device-login/device-login.service.js';
import { regenerateSession, saveSession } from '../../common/http/session-cookie.js';
import { SsoConnectionsService } from './sso-connections.service.js';
import { sendPage } from '../device-login/device-pages.js';
import { SSO_ATTEMPT_TTL_SECONDS, SsoSignInFailure, SsoSignInService } from './sso-sign-in.service.js';
import { SsoDiscoverDto } from './sso.dto.js';

/** Carries `state` from start to callback in the browser that started the sign-in. */
export const SSO_STATE_COOKIE = 'attestly.sso_state';
const CALLBACK_PATH = '/api/v1/auth/sso/callback';
const SLUG = /^[a-z0-9][a-z0-9-]{0,99}$/;

/**
 * Single sign-on through the organization's OpenID Connect provider. Start and callback are
 * browser navigations and answer redirects or pages, never JSON envelopes.
 */
@Controller('api/v1/auth/sso')
export class SsoSignInController {
  private readonly secureCookie: boolean;

  constructor(
    private readonly signIn: SsoSignInService,
    private readonly connections: SsoConnectionsService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    this.secureCookie = config.baseUrl.startsWith('https:');
  }

  /**
   * Where an address signs in: the start URL of the organization whose connection answers for
   * its domain, or `sso: false`. Same shape either way, and nothing about whether the address
   * has an account.
   */
  @Post('discover')
  @RateLimit('sso-ip')
  @Public()
  @HttpCode(200)
  async discover(@Body() body: SsoDiscoverDto) {
    const slug = await this.connections.organizationSlugForEmail(body.email);
    return {
      sso: slug !== null,
      startUrl: slug === null ? null : this.startUrl(slug, body.email),
    };
  }

  @Get('start')
  @RateLimit('sso-ip')
  @Public()
  async start(
    @Res() response: Response,
    @Query('org') org?: unknown,
    @Query('login_hint') loginHint?: unknown,
    @Query('cli_session_id') cliSessionId?: unknown,
  ) {
    if (typeof org !== 'string' || !SLUG.test(org)) {
      return sendPage(response, 400, {
        kind: 'message',
        tone: 'error',
        title: 'Invalid sign-in link',
        message: 'The link does not name an organization. Enter your work e-mail address on the sign-in page instead.',
      });
    }
    const hint = typeof loginHint === 'string' && loginHint.length <= 254 ? loginHint : undefined;
    const cli = cliSessionIdOf(cliSessionId) ?? undefined;
    try {
      const { redirectTo, state } = await this.signIn.start(org, { loginHint: hint, cliSessionId: cli });
      response.cookie(SSO_STATE_COOKIE, state, {
        httpOnly: true,
        // Lax: the provider's redirect back is a top-level navigation from another site.
        sameSite: 'lax',
        secure: this.secureCookie,
        path: CALLBACK_PATH,
        maxAge: SSO_ATTEMPT_TTL_SECONDS * 1000,
      });
      response.set('Cache-Control', 'no-store').redirect(303, redirectTo);
    } catch (error) {
      if (error instanceof SsoSignInFailure) return this.failed(response, error);
      throw error;
    }
  }

  @Get('callback')
  @Public()
  async callback(@Req() request: Request, @Res() response: Response) {
    response.clearCookie(SSO_STATE_COOKIE, { path: CALLBACK_PATH });
    const query = request.originalUrl.includes('?')
      ? request.originalUrl.slice(request.originalUrl.indexOf('?') + 1)
      : '';
    try {
      const signedIn = await this.signIn.complete(query, stateCookie(request), request.ip ?? null);
      // A new session id at every sign-in, as for password sign-in: a fixed session is worthless.
      await regenerateSession(request);
      request.session.userId = signedIn.userId;
      request.session.organizationId = signedIn.organizationId;
      await saveSession(request);
      const destination = signedIn.cliSessionId
        ? `${this.config.baseUrl}/device?session_id=${encodeURIComponent(signedIn.cliSessionId)}`
        : `${this.config.dashboardOrigins[0] ?? this.config.baseUrl}/`;
      response.set('Cache-Control', 'no-store').redirect(303, destination);
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
