import { Body, Controller, Get, HttpCode, Post, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { Access, Public } from '../common/access/access.decorator.js';
import { RateLimit } from '../rate-limit/rate-limit.guard.js';
import { AndroidAttestationService } from './android-attestation.service.js';
import { RefreshAttestationDto, ValidateAndroidDto, ValidateAttestationDto } from './attestation.dto.js';
import { AttestationService } from './attestation.service.js';
import { ChallengeService } from './challenge.service.js';
import { DebugAttestationDto } from './debug-tokens.dto.js';
import { DebugTokensService } from './debug-tokens.service.js';
import { SigningKeysService } from '../device-tokens/signing-keys.service.js';

/** The SDK's attestation surface, addressed by `X-Bundle-ID` and `X-Team-ID` (iOS) or `X-Package-Name` (Android). */
@Controller('api/v1/attestation')
@Access({ tenant: true })
export class AttestationController {
  constructor(
    private readonly attestation: AttestationService,
    private readonly challenges: ChallengeService,
    private readonly debugTokens: DebugTokensService,
    private readonly android: AndroidAttestationService,
  ) {}

  @Get('challenge')
  @RateLimit('ip-challenge', 'challenge')
  async challenge(@Req() request: Request) {
    return this.challenges.issue(request.tenant!.appId);
  }

  @Post('validate')
  @RateLimit('ip-validate', 'attest')
  @HttpCode(200)
  async validate(@Req() request: Request, @Body() body: ValidateAttestationDto) {
    return this.attestation.validate(request.tenant!, body);
  }

  @Post('refresh')
  @RateLimit('ip-validate', 'attest')
  @HttpCode(200)
  async refresh(@Req() request: Request, @Body() body: RefreshAttestationDto) {
    return this.attestation.refresh(request.tenant!, body);
  }

  /** Android (`X-Package-Name`): a Play Integrity token; also how a known installation refreshes. */
  @Post('android/validate')
  @RateLimit('ip-validate', 'attest')
  @HttpCode(200)
  async validateAndroid(@Req() request: Request, @Body() body: ValidateAndroidDto) {
    return this.android.validate(request.tenant!, body);
  }

  /** Simulator and CI builds: a debug token instead of an App Attest attestation, limited like validate. */
  @Post('debug')
  @RateLimit('ip-validate', 'attest')
  @HttpCode(200)
  async debug(@Req() request: Request, @Body() body: DebugAttestationDto) {
    return this.debugTokens.exchange(request.tenant!, body);
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
