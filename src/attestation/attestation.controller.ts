import { Body, Controller, Get, HttpCode, Post, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { Access, Public } from '../common/access/access.decorator.js';
import { tierDefinition } from '../common/tiers.js';
import type { Tenant } from '../apps/tenant-resolver.js';
import { RateLimitService } from '../rate-limit/rate-limit.service.js';
import type { PerIpLimitName } from '../rate-limit/per-ip-limits.js';
import { RefreshAttestationDto, ValidateAttestationDto } from './attestation.dto.js';
import { AttestationService } from './attestation.service.js';
import { ChallengeService } from './challenge.service.js';
import { SigningKeysService } from './signing-keys.service.js';

/** The SDK's attestation surface, addressed by `X-Bundle-ID` and `X-Team-ID`. */
@Controller('api/v1/attestation')
@Access({ tenant: true })
export class AttestationController {
  constructor(
    private readonly attestation: AttestationService,
    private readonly challenges: ChallengeService,
    private readonly rateLimit: RateLimitService,
  ) {}

  @Get('challenge')
  async challenge(@Req() request: Request, @Res({ passthrough: true }) response: Response) {
    const tenant = await this.limit(request, response, 'challenge', 'challenge');
    return this.challenges.issue(tenant.appId);
  }

  @Post('validate')
  @HttpCode(200)
  async validate(
    @Req() request: Request,
    @Res({ passthrough: true }) response: Response,
    @Body() body: ValidateAttestationDto,
  ) {
    return this.attestation.validate(await this.limit(request, response, 'validate', 'attest'), body);
  }

  @Post('refresh')
  @HttpCode(200)
  async refresh(
    @Req() request: Request,
    @Res({ passthrough: true }) response: Response,
    @Body() body: RefreshAttestationDto,
  ) {
    return this.attestation.refresh(await this.limit(request, response, 'validate', 'attest'), body);
  }

  /** Per-IP protection first, then the organization's bucket for its plan. */
  private async limit(
    request: Request,
    response: Response,
    perIp: PerIpLimitName | null,
    bucket: 'attest' | 'challenge',
  ): Promise<Tenant> {
    const tenant = request.tenant!;
    if (perIp) await this.rateLimit.enforcePerIp(response, perIp, request.ip);
    await this.rateLimit.enforce(
      response,
      bucket,
      tenant.organizationId,
      tierDefinition(tenant.serviceTier).rates[bucket],
    );
    return tenant;
  }
}

/** Public keys that verify the service's tokens, including recently retired ones. */
@Controller('.well-known')
@Public()
export class JwksController {
  constructor(private readonly keys: SigningKeysService) {}

  @Get('jwks.json')
  jwks(@Res({ passthrough: true }) response: Response) {
    response.setHeader('Cache-Control', 'public, max-age=300');
    return this.keys.jwks();
  }
}
