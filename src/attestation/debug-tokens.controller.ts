import { Body, Controller, Delete, Get, HttpCode, Post } from '@nestjs/common';
import { Access } from '../common/access/access.decorator.js';
import { OrgAuth, type OrgAuthContext } from '../common/access/auth-context.js';
import { RateLimit } from '../rate-limit/rate-limit.guard.js';
import { UuidParam } from '../common/validation/uuid-param.js';
import { CreateDebugTokenDto } from './debug-tokens.dto.js';
import { DebugTokensService } from './debug-tokens.service.js';

/**
 * An app's debug tokens for Simulator and CI builds: Admins and Owners only. Creations and
 * revocations are limited per app and per organization (decision 0065).
 */
@Controller('api/v1/apps/:appID/debug-tokens')
@Access({ session: 'admin' })
export class DebugTokensController {
  constructor(private readonly debugTokens: DebugTokensService) {}

  @Get()
  list(@OrgAuth() auth: OrgAuthContext, @UuidParam('appID') appId: string) {
    return this.debugTokens.list(auth, appId);
  }

  @Post()
  @RateLimit('debug-token-create-app', 'debug-token-create-organization')
  create(@OrgAuth() auth: OrgAuthContext, @UuidParam('appID') appId: string, @Body() body: CreateDebugTokenDto) {
    return this.debugTokens.create(auth, appId, body);
  }

  @Delete(':tokenId')
  @HttpCode(204)
  @RateLimit('debug-token-revoke-app', 'debug-token-revoke-organization')
  async revoke(
    @OrgAuth() auth: OrgAuthContext,
    @UuidParam('appID') appId: string,
    @UuidParam('tokenId') tokenId: string,
  ): Promise<void> {
    await this.debugTokens.revoke(auth, appId, tokenId);
  }
}
