import { Controller, Delete, HttpCode, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { Access } from '../common/access/access.decorator.js';
import { OrgAuth, type OrgAuthContext } from '../common/access/auth-context.js';
import { SESSION_COOKIE, destroySession } from '../common/http/session-cookie.js';
import { AccountDeletionService } from './account-deletion.service.js';

/** The signed-in user's own account. */
@Controller('api/v1/account')
export class AccountController {
  constructor(private readonly deletion: AccountDeletionService) {}

  /** 204: the account is pending deletion and signed out everywhere; it is erased after 30 days. */
  @Delete()
  @Access({ session: 'owner' })
  @HttpCode(204)
  async deleteAccount(
    @OrgAuth() auth: OrgAuthContext,
    @Req() request: Request,
    @Res({ passthrough: true }) response: Response,
  ): Promise<void> {
    await this.deletion.requestDeletion(auth);
    await destroySession(request);
    response.clearCookie(SESSION_COOKIE, { path: '/' });
  }
}
