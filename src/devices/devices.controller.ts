import { Body, Controller, Get, HttpCode, Param, Post, Query, Res } from '@nestjs/common';
import type { Response } from 'express';
import { Access } from '../common/access/access.decorator.js';
import { OrgAuth, type OrgAuthContext } from '../common/access/auth-context.js';
import { tierDefinition } from '../common/tiers.js';
import { RateLimitService } from '../rate-limit/rate-limit.service.js';
import { DeviceAnalyticsService } from './device-analytics.service.js';
import { BlockDeviceDto, DeviceDetailsQuery, ListDevicesQuery, ListEventsQuery } from './devices.dto.js';
import { DevicesService } from './devices.service.js';

/**
 * The organization's attested devices. `:keyId` is the App Attest key identifier, standard base64:
 * send it URL-encoded (`/` as `%2F`, `+` as `%2B`, `=` as `%3D`).
 */
@Controller('api/v1/devices')
export class DevicesController {
  constructor(private readonly devices: DevicesService) {}

  @Get()
  @Access({ session: 'viewer' })
  list(@OrgAuth() auth: OrgAuthContext, @Query() query: ListDevicesQuery) {
    return this.devices.list(auth, query);
  }

  @Post(':keyId/block')
  @Access({ session: 'admin' })
  @HttpCode(200)
  block(@OrgAuth() auth: OrgAuthContext, @Param('keyId') keyId: string, @Body() body: BlockDeviceDto) {
    return this.devices.setBlocked(auth, keyId, true, body.reason || null);
  }

  @Post(':keyId/unblock')
  @Access({ session: 'admin' })
  @HttpCode(200)
  unblock(@OrgAuth() auth: OrgAuthContext, @Param('keyId') keyId: string) {
    return this.devices.setBlocked(auth, keyId, false, null);
  }
}

/**
 * Server-to-server analytics: an API key with `org:read` (as `X-API-Key` or `Authorization:
 * Bearer`), counted against the organization's `apikey` rate-limit bucket; a dashboard session
 * (Viewer and up) reads the same without the bucket.
 */
@Controller('api/v1/analytics')
@Access({ session: 'viewer', apiKey: ['org:read'] })
export class AnalyticsController {
  constructor(
    private readonly analytics: DeviceAnalyticsService,
    private readonly rateLimit: RateLimitService,
  ) {}

  @Get('devices/:keyId')
  async device(
    @OrgAuth() auth: OrgAuthContext,
    @Res({ passthrough: true }) response: Response,
    @Param('keyId') keyId: string,
    @Query() query: DeviceDetailsQuery,
  ) {
    await this.limitApiKey(auth, response);
    return this.analytics.deviceDetails(auth, keyId, query);
  }

  @Get('events')
  async events(
    @OrgAuth() auth: OrgAuthContext,
    @Res({ passthrough: true }) response: Response,
    @Query() query: ListEventsQuery,
  ) {
    await this.limitApiKey(auth, response);
    return this.analytics.events(auth, query);
  }

  private async limitApiKey(auth: OrgAuthContext, response: Response): Promise<void> {
    if (auth.caller.kind !== 'apiKey') return;
    const limit = tierDefinition(await this.analytics.serviceTier(auth.organizationId)).rates.apikey;
    await this.rateLimit.enforce(response, 'apikey', auth.organizationId, limit);
  }
}
