import { RateLimit } from '../../rate-limit/rate-limit.guard.js';
import { Controller, Inject, Post, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { Public } from '../../common/access/access.decorator.js';
import type { AppConfig } from '../../config/app-config.js';
import { APP_CONFIG } from '../../config/config.module.js';
import { cliSessionIdOf } from '../device-login/device-login.service.js';
import { SsoDomainsService } from './sso-domains.service.js';
import { sendPage } from '../device-login/device-pages.js';

const EMAIL = /^[^\s@]{1,64}@[^\s@]{1,253}$/;

/**
 * "Sign in with SSO" on the device-login page: finds the organization by the address's domain and
 * sends the browser on to its sign-in (by navigation: see the `continue` page), which comes back
 * to the same approval card (`/device?session_id=…`).
 */
@Controller('device')
@Public()
export class SsoDeviceLoginController {
  private readonly serviceOrigin: string;

  constructor(
    private readonly domains: SsoDomainsService,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.serviceOrigin = new URL(config.baseUrl).origin;
  }

  @Post('sso')
  @RateLimit('sso-ip')
  async sso(@Req() request: Request, @Res() response: Response) {
    const body = request.body as Record<string, unknown> | undefined;
    const sessionId = cliSessionIdOf(body?.session_id);
    if (!sessionId) {
      return sendPage(response, 400, {
        kind: 'message',
        tone: 'error',
        title: 'Invalid sign-in link',
        message: 'This link is incomplete or damaged. Run the login command again to get a new link.',
      });
    }
    const origin = request.headers.origin;
    if (origin !== undefined && origin !== this.serviceOrigin) {
      return sendPage(response, 403, {
        kind: 'message',
        tone: 'error',
        title: 'Request refused',
        message: 'This form was posted from another site.',
      });
    }
    const email = typeof body?.sso_email === 'string' ? body.sso_email.trim() : '';
    if (!EMAIL.test(email)) {
      return sendPage(response, 400, {
        kind: 'signIn',
        sessionId,
        ssoEmail: email,
        error: 'Enter your work e-mail address to sign in with SSO.',
      });
    }
    const slug = await this.domains.organizationSlugForEmail(email);
    if (!slug) {
      return sendPage(response, 404, {
        kind: 'signIn',
        sessionId,
        ssoEmail: email,
        error: `Single sign-on is not set up for addresses at ${email.slice(email.lastIndexOf('@') + 1)}. Sign in with your password instead.`,
      });
    }
    const query = new URLSearchParams({ org: slug, login_hint: email, cli_session_id: sessionId });
    sendPage(response, 200, {
      kind: 'continue',
      title: 'Continuing to single sign-on',
      message: "Taking you to your organization's identity provider.",
      path: `/api/v1/auth/sso/start?${query.toString()}`,
    });
  }
}
