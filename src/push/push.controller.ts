import { Body, Controller, Delete, Get, HttpCode, Post, Put, Req } from '@nestjs/common';
import type { Request } from 'express';
import { Access } from '../common/access/access.decorator.js';
import { OrgAuth, type OrgAuthContext } from '../common/access/auth-context.js';
import { UuidParam } from '../common/validation/uuid-param.js';
import { PutPushCredentialsDto, RegisterPushTokenDto } from './push.dto.js';
import { PushCredentialsService } from './push-credentials.service.js';
import { PushTokensService } from './push-tokens.service.js';

/** An app's APNs credentials: Admins and Owners. The key is accepted, never shown. */
@Controller('api/v1/apps/:appID/push-credentials')
@Access({ session: 'admin' })
export class PushCredentialsController {
  constructor(private readonly credentials: PushCredentialsService) {}

  @Get()
  get(@OrgAuth() auth: OrgAuthContext, @UuidParam('appID') appId: string) {
    return this.credentials.get(auth, appId);
  }

  @Put()
  put(@OrgAuth() auth: OrgAuthContext, @UuidParam('appID') appId: string, @Body() body: PutPushCredentialsDto) {
    return this.credentials.put(auth, appId, body);
  }

  @Delete()
  @HttpCode(204)
  async remove(@OrgAuth() auth: OrgAuthContext, @UuidParam('appID') appId: string): Promise<void> {
    await this.credentials.remove(auth, appId);
  }
}

/** The SDK registers the device's APNs token for a subscriber, showing its attestation token. */
@Controller('api/v1/push')
@Access({ tenant: true, deviceToken: true })
export class PushTokensController {
  constructor(private readonly tokens: PushTokensService) {}

  @Post('tokens')
  register(@Req() request: Request, @Body() body: RegisterPushTokenDto) {
    // A server registering with an API key of the organization has no attestation key.
    return this.tokens.register(request.tenant!, request.deviceToken?.sub ?? 'api-key', body);
  }
}
