import { Body, Controller, HttpCode, Post, Res } from '@nestjs/common';
import type { Response } from 'express';
import { Access } from '../common/access/access.decorator.js';
import { OrgAuth, type OrgAuthContext } from '../common/access/auth-context.js';
import { tierDefinition } from '../common/tiers.js';
import { RateLimitService } from '../rate-limit/rate-limit.service.js';
import { TokenVerificationService } from './token-verification.service.js';
import { VerifyTokenDto } from './tokens.dto.js';

/**
 * Server-to-server: an app's backend asks whether a device token is valid, and may use it up.
 * An API key with `tokens:verify`, counted in the organization's `apikey` bucket.
 */
@Controller('api/v1/tokens')
export class TokensController {
  constructor(
    private readonly verification: TokenVerificationService,
    private readonly rateLimit: RateLimitService,
  ) {}

  @Post('verify')
  @Access({ apiKey: ['tokens:verify'] })
  @HttpCode(200)
  async verify(
    @OrgAuth() auth: OrgAuthContext,
    @Res({ passthrough: true }) response: Response,
    @Body() body: VerifyTokenDto,
  ) {
    const limit = tierDefinition(await this.verification.serviceTier(auth.organizationId)).rates.apikey;
    await this.rateLimit.enforce(response, 'apikey', auth.organizationId, limit);
    return this.verification.verify(auth, body);
  }
}
