import { Body, Controller, HttpCode, Post } from '@nestjs/common';
import { Access } from '../common/access/access.decorator.js';
import { OrgAuth, type OrgAuthContext } from '../common/access/auth-context.js';
import { RateLimit } from '../rate-limit/rate-limit.guard.js';
import { TokenVerificationService } from './token-verification.service.js';
import { VerifyTokenDto } from './tokens.dto.js';

/**
 * Server-to-server: an app's backend asks whether a device token is valid, and may use it up.
 * An API key with `tokens:verify`, counted in the organization's `apikey` bucket.
 */
@Controller('api/v1/tokens')
export class TokensController {
  constructor(private readonly verification: TokenVerificationService) {}

  @Post('verify')
  @Access({ apiKey: ['tokens:verify'] })
  @RateLimit('apikey')
  @HttpCode(200)
  verify(@OrgAuth() auth: OrgAuthContext, @Body() body: VerifyTokenDto) {
    return this.verification.verify(auth, body);
  }
}
