import { Body, Controller, Get, HttpCode, Post, Query, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { Access, Public } from '../common/access/access.decorator.js';
import { Auth, type AuthContext, type SessionCaller } from '../common/access/auth-context.js';
import { badRequest } from '../common/errors/app-exception.js';
import { InvalidInputStatus } from '../common/validation/validation.js';
import { AuthResponses } from './auth-response.js';
import {
  ChangeEmailDto,
  ForgotPasswordDto,
  LoginDto,
  RegisterDto,
  ResetPasswordDto,
  SwitchOrgDto,
  TokenDto,
} from './auth.dto.js';
import { AuthService, FORGOT_PASSWORD_MESSAGE, REGISTER_MESSAGE } from './auth.service.js';
import { PasswordGate } from './password-gate.js';
import { SESSION_COOKIE, destroySession, saveSession } from '../common/http/session-cookie.js';
import { PASSWORD_SIGN_IN, signInOf } from './session/session-admission.js';
import { startSignedInSession } from './session/signed-in-session.js';
import { RateLimit } from '../rate-limit/rate-limit.guard.js';
import { InviteAcceptanceService } from '../team/invite-acceptance.service.js';

/** Dashboard authentication: cookie sessions, sign-up, password and e-mail flows, organizations. */
@Controller('api/v1/auth')
export class AuthController {
  constructor(
    private readonly auth: AuthService,
    private readonly invites: InviteAcceptanceService,
    private readonly passwords: PasswordGate,
    private readonly responses: AuthResponses,
  ) {}

  @Post('register')
  @RateLimit('register-ip', 'register-email')
  @Public()
  @HttpCode(202)
  register(@Body() body: RegisterDto) {
    this.auth.register(body);
    return { message: REGISTER_MESSAGE };
  }

  /** Failed sign-ins are limited inside the password gate (per account, browser and address). */
  @Post('login')
  @Public()
  @HttpCode(200)
  async login(@Req() request: Request, @Res({ passthrough: true }) response: Response, @Body() body: LoginDto) {
    const { user, deviceCookie } = await this.auth.login(this.passwords.attemptOf(request, body.email, body.password));
    this.passwords.setDeviceCookie(response, deviceCookie);
    const organizationId = await this.auth.defaultOrganization(user.id);
    await startSignedInSession(request, user.id, organizationId, PASSWORD_SIGN_IN);
    await this.auth.recordLogin(user.id, organizationId, request.ip ?? null);
    return this.responses.build(user.id, organizationId);
  }

  @Post('logout')
  @Public()
  @HttpCode(204)
  async logout(@Req() request: Request, @Res({ passthrough: true }) response: Response): Promise<void> {
    await destroySession(request);
    response.clearCookie(SESSION_COOKIE, { path: '/' });
  }

  /** The session's auth response, or for an API key the minimal identity. */
  @Get('me')
  @Access({ session: 'user', apiKey: [] })
  async me(@Auth() auth: AuthContext) {
    if (auth.caller.kind === 'apiKey') return { email: auth.caller.email, apiKeyPrefix: auth.caller.prefix };
    return this.responses.build(auth.caller.userId, auth.organizationId);
  }

  @Post('forgot-password')
  @RateLimit('ip-password-reset', 'forgot-password-email')
  @Public()
  @HttpCode(200)
  forgotPassword(@Body() body: ForgotPasswordDto) {
    this.auth.forgotPassword(body.email);
    return { message: FORGOT_PASSWORD_MESSAGE };
  }

  @Post('reset-password')
  @RateLimit('ip-password-reset')
  @Public()
  @HttpCode(200)
  @InvalidInputStatus(400)
  async resetPassword(@Body() body: ResetPasswordDto) {
    await this.auth.resetPassword(body.token, body.password, body.confirm_password);
    return { message: 'Your password has been changed. Sign in with the new password.' };
  }

  @Post('change-email')
  @RateLimit('change-email-address')
  @Access({ session: 'user' })
  @HttpCode(200)
  async changeEmail(@Auth() auth: AuthContext, @Body() body: ChangeEmailDto) {
    await this.auth.changeEmail(auth.caller as SessionCaller, body.new_email);
    return {
      message: `A confirmation link has been sent to ${body.new_email}. Your current address stays active until you confirm.`,
    };
  }

  @Post('confirm-email-change')
  @Public()
  @HttpCode(200)
  @InvalidInputStatus(400)
  async confirmEmailChange(@Body() body: TokenDto) {
    const email = await this.auth.confirmEmailChange(body.token);
    return { message: 'Your e-mail address has been changed.', email };
  }

  @Get('verify-email')
  @Public()
  async verifyEmail(@Req() request: Request, @Query('token') token?: unknown) {
    if (typeof token !== 'string' || token === '')
      throw badRequest('token: is required', { hint: 'Use the link from the confirmation mail' });
    const userId = await this.auth.verifyEmail(token);
    const organizationId = await this.auth.defaultOrganization(userId);
    // The confirmation link is the account's own credential, as its password is.
    await startSignedInSession(request, userId, organizationId, PASSWORD_SIGN_IN);
    return this.responses.build(userId, organizationId);
  }

  @Post('accept-invite')
  @Access({ session: 'user' })
  @HttpCode(200)
  async acceptInvite(@Auth() auth: AuthContext, @Body() body: TokenDto) {
    const organization = await this.invites.accept(auth.caller as SessionCaller, body.token);
    return { orgId: organization.id, orgName: organization.name, orgSlug: organization.slug };
  }

  @Get('orgs')
  @Access({ session: 'user' })
  orgs(@Req() request: Request, @Auth() auth: AuthContext) {
    return this.auth.organizationsOf(auth.caller as SessionCaller, auth.organizationId, signInOf(request.session));
  }

  @Post('switch-org')
  @Access({ session: 'user' })
  @HttpCode(200)
  async switchOrg(@Req() request: Request, @Auth() auth: AuthContext, @Body() body: SwitchOrgDto) {
    const organization = await this.auth.organizationToSwitchTo(
      auth.caller as SessionCaller,
      body.slug,
      signInOf(request.session),
    );
    request.session.organizationId = organization.id;
    await saveSession(request);
    return this.responses.build(auth.caller.userId!, organization.id);
  }

  /** The caller leaves an organization; it needs no session in it (see AuthService.leaveOrganization). */
  @Post('leave-org')
  @Access({ session: 'user' })
  @HttpCode(204)
  async leaveOrg(@Req() request: Request, @Auth() auth: AuthContext, @Body() body: SwitchOrgDto): Promise<void> {
    // A session that was in it finds itself without an organization at its next request.
    await this.auth.leaveOrganization(
      auth.caller as SessionCaller,
      body.slug,
      signInOf(request.session),
      request.ip ?? null,
    );
  }

  @Post('clear-org')
  @Access({ session: 'user' })
  @HttpCode(200)
  async clearOrg(@Req() request: Request, @Auth() auth: AuthContext) {
    request.session.organizationId = null;
    await saveSession(request);
    return this.responses.build(auth.caller.userId!, null);
  }
}
