import { Body, Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { Access } from '../common/access/access.decorator.js';
import { OrgAuth, type OrgAuthContext } from '../common/access/auth-context.js';
import { type TierFeature } from '../common/tiers.js';
import { RateLimit } from '../rate-limit/rate-limit.guard.js';
import { DeviceAnalyticsService } from './device-analytics.service.js';
import { BlockDeviceDto, DeviceDetailsQuery, ListDevicesQuery, ListEventsQuery } from './devices.dto.js';
import { DevicesService } from './devices.service.js';
import { PlanService } from '../organizations/plan.service.js';

/**
 * The organization's attested devices. `:keyId` is the App Attest key identifier, standard base64:
 * send it URL-encoded (`/` as `%2F`, `+` as `%2B`, `=` as `%3D`).
 */
@Controller('api/v1/devices')
export class DevicesController {
  constructor(
    private readonly devices: DevicesService,
    private readonly analytics: DeviceAnalyticsService,
    private readonly plans: PlanService,
  ) {}

  /** The risk-scored device list: the `riskScoring` feature (every plan). */
  @Get()
  @Access({ session: 'viewer' })
  async list(@OrgAuth() auth: OrgAuthContext, @Query() query: ListDevicesQuery) {
    await requireFeature(this.plans, auth, 'riskScoring', 'Device risk scores are not part of your plan');
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
@RateLimit('apikey')
export class AnalyticsController {
  constructor(
    private readonly analytics: DeviceAnalyticsService,
    private readonly plans: PlanService,
  ) {}

  @Get('devices/:keyId')
  async device(@OrgAuth() auth: OrgAuthContext, @Param('keyId') keyId: string, @Query() query: DeviceDetailsQuery) {
    // Device intelligence: the profile, recent events and compliance of one device, from Business.
    await requireFeature(this.plans, auth, 'deviceIntelligence', 'Device details are available from the Business plan');
    return this.analytics.deviceDetails(auth, keyId, query);
  }

  @Get('events')
  async events(@OrgAuth() auth: OrgAuthContext, @Query() query: ListEventsQuery) {
    await requireFeature(this.plans, auth, 'riskScoring', 'Risk-scored device events are not part of your plan');
    return this.analytics.events(auth, query);
  }
}

/** 403 `feature_unavailable` unless the organization's plan has `feature` (the tier table). */
async function requireFeature(
  plans: PlanService,
  auth: OrgAuthContext,
  feature: TierFeature,
  message: string,
): Promise<void> {
  await plans.requireFeature(auth.organizationId, feature, { message, hint: 'Upgrade the plan' });
}
