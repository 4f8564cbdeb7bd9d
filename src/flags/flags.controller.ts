import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Put, Res } from '@nestjs/common';
import type { Response } from 'express';
import { ApiResponse } from '@nestjs/swagger';
import { Access } from '../common/access/access.decorator.js';
import { OrgAuth, type OrgAuthContext } from '../common/access/auth-context.js';
import { UuidParam } from '../common/validation/uuid-param.js';
import { InvalidInputStatus } from '../common/validation/validation.js';
import { toFlagResponse, toOverrideResponse } from './flag.entity.js';
import { FlagAddressParam, type FlagAddress } from './flag-key-param.js';
import { ChangeRequestsService, type Outcome } from './change-requests.service.js';
import { FlagSchedulesService, toScheduleResponse } from './flag-schedules.service.js';
import {
  CreateFlagDto,
  CreateOverrideDto,
  CreateScheduleDto,
  EnvironmentConfigDto,
  RollbackDto,
  SetApprovalDto,
  UpdateFlagDto,
} from './flags.dto.js';
import { PROPOSED, SCHEDULE_SCHEMA } from './flags.openapi.js';
import { FlagsService } from './flags.service.js';

/**
 * Flag management for the dashboard: any member reads, Members and above change. Every write that
 * can change what a device is served goes through ChangeRequestsService.submit, the gate of
 * protected environments (decision 0064); only the protection itself (Admins) is set directly.
 *
 * Each route of one flag answers at two addresses: by id, `flags/:flagId/...`, and by key,
 * `apps/:appId/flags/:flagKey/...` (a UUID in the key position is taken as the id). Keys are what
 * people and scripts know; ids are what the dashboard links. One handler serves both, so they
 * cannot drift apart: `@FlagAddressParam()` reads either address and `FlagsService.idOf` finds the
 * flag. Each address's summary is in ROUTE_DOCS (src/openapi/route-docs.ts).
 */
@Controller('api/v1/dashboard')
export class FlagsController {
  constructor(
    private readonly flags: FlagsService,
    private readonly schedules: FlagSchedulesService,
    private readonly changeRequests: ChangeRequestsService,
  ) {}

  @Get('apps/:appId/flags')
  @Access({ session: 'viewer', personalKey: ['flags:read'] })
  async list(@OrgAuth() auth: OrgAuthContext, @UuidParam('appId') appId: string) {
    return (await this.flags.list(auth, appId)).map(toFlagResponse);
  }

  @Post('apps/:appId/flags')
  @Access({ session: 'member', personalKey: ['flags:write'] })
  @ApiResponse(PROPOSED)
  async create(
    @OrgAuth() auth: OrgAuthContext,
    @Res({ passthrough: true }) response: Response,
    @UuidParam('appId') appId: string,
    @Body() body: CreateFlagDto,
  ) {
    return answer(
      response,
      await this.changeRequests.submit(auth, { kind: 'creation', appId, input: body }),
      toFlagResponse,
    );
  }

  @Get(['flags/:flagId', 'apps/:appId/flags/:flagKey'])
  @Access({ session: 'viewer', personalKey: ['flags:read'] })
  async get(@OrgAuth() auth: OrgAuthContext, @FlagAddressParam() address: FlagAddress) {
    const flagId = await this.flags.idOf(auth, address);
    return toFlagResponse(await this.flags.get(auth, flagId));
  }

  @Patch(['flags/:flagId', 'apps/:appId/flags/:flagKey'])
  @Access({ session: 'member', personalKey: ['flags:write'] })
  @ApiResponse(PROPOSED)
  async update(
    @OrgAuth() auth: OrgAuthContext,
    @Res({ passthrough: true }) response: Response,
    @FlagAddressParam() address: FlagAddress,
    @Body() body: UpdateFlagDto,
  ) {
    const flagId = await this.flags.idOf(auth, address);
    return answer(
      response,
      await this.changeRequests.submit(auth, { kind: 'update', flagId, input: body }),
      toFlagResponse,
    );
  }

  @Delete(['flags/:flagId', 'apps/:appId/flags/:flagKey'])
  @Access({ session: 'member', personalKey: ['flags:write'] })
  @HttpCode(204)
  @ApiResponse(PROPOSED)
  async remove(
    @OrgAuth() auth: OrgAuthContext,
    @Res({ passthrough: true }) response: Response,
    @FlagAddressParam() address: FlagAddress,
  ) {
    const flagId = await this.flags.idOf(auth, address);
    return answer(response, await this.changeRequests.submit(auth, { kind: 'deletion', flagId }), () => undefined);
  }

  @Put(['flags/:flagId/environments/:environment', 'apps/:appId/flags/:flagKey/environments/:environment'])
  @Access({ session: 'member', personalKey: ['flags:write'] })
  @ApiResponse(PROPOSED)
  async putEnvironment(
    @OrgAuth() auth: OrgAuthContext,
    @Res({ passthrough: true }) response: Response,
    @FlagAddressParam() address: FlagAddress,
    @Param('environment') environment: string,
    @Body() body: EnvironmentConfigDto,
  ) {
    const flagId = await this.flags.idOf(auth, address);
    return answer(response, await this.changeRequests.putEnvironment(auth, flagId, environment, body), toFlagResponse);
  }

  @Put([
    'flags/:flagId/environments/:environment/approval',
    'apps/:appId/flags/:flagKey/environments/:environment/approval',
  ])
  @Access({ session: 'admin', personalKey: ['flags:write'] })
  async setApproval(
    @OrgAuth() auth: OrgAuthContext,
    @FlagAddressParam() address: FlagAddress,
    @Param('environment') environment: string,
    @Body() body: SetApprovalDto,
  ) {
    const flagId = await this.flags.idOf(auth, address);
    return toFlagResponse(await this.flags.setApproval(auth, flagId, environment, body.requireApproval));
  }

  @Get(['flags/:flagId/history', 'apps/:appId/flags/:flagKey/history'])
  @Access({ session: 'viewer', personalKey: ['flags:read'] })
  async history(@OrgAuth() auth: OrgAuthContext, @FlagAddressParam() address: FlagAddress) {
    const flagId = await this.flags.idOf(auth, address);
    return this.flags.history(auth, flagId);
  }

  @Post(['flags/:flagId/rollback', 'apps/:appId/flags/:flagKey/rollback'])
  @Access({ session: 'member', personalKey: ['flags:write'] })
  @HttpCode(200)
  @ApiResponse(PROPOSED)
  async rollback(
    @OrgAuth() auth: OrgAuthContext,
    @Res({ passthrough: true }) response: Response,
    @FlagAddressParam() address: FlagAddress,
    @Body() body: RollbackDto,
  ) {
    const flagId = await this.flags.idOf(auth, address);
    const write = { kind: 'rollback', flagId, version: body.version } as const;
    return answer(response, await this.changeRequests.submit(auth, write), toFlagResponse);
  }

  @Get(['flags/:flagId/overrides', 'apps/:appId/flags/:flagKey/overrides'])
  @Access({ session: 'viewer', personalKey: ['flags:read'] })
  async overrides(@OrgAuth() auth: OrgAuthContext, @FlagAddressParam() address: FlagAddress) {
    const flagId = await this.flags.idOf(auth, address);
    return (await this.flags.listOverrides(auth, flagId)).map(toOverrideResponse);
  }

  @Post(['flags/:flagId/overrides', 'apps/:appId/flags/:flagKey/overrides'])
  @Access({ session: 'member', personalKey: ['flags:write'] })
  @InvalidInputStatus(400)
  @ApiResponse(PROPOSED)
  async createOverride(
    @OrgAuth() auth: OrgAuthContext,
    @Res({ passthrough: true }) response: Response,
    @FlagAddressParam() address: FlagAddress,
    @Body() body: CreateOverrideDto,
  ) {
    const flagId = await this.flags.idOf(auth, address);
    const outcome = await this.changeRequests.submit(auth, { kind: 'override', flagId, input: body });
    return answer(response, outcome, toOverrideResponse);
  }

  @Delete(['flags/:flagId/overrides/:overrideId', 'apps/:appId/flags/:flagKey/overrides/:overrideId'])
  @Access({ session: 'member', personalKey: ['flags:write'] })
  @HttpCode(204)
  @ApiResponse(PROPOSED)
  async deleteOverride(
    @OrgAuth() auth: OrgAuthContext,
    @Res({ passthrough: true }) response: Response,
    @FlagAddressParam() address: FlagAddress,
    @UuidParam('overrideId') overrideId: string,
  ) {
    const flagId = await this.flags.idOf(auth, address);
    const outcome = await this.changeRequests.submit(auth, { kind: 'override_removal', flagId, overrideId });
    return answer(response, outcome, () => undefined);
  }

  @Get(['flags/:flagId/schedules', 'apps/:appId/flags/:flagKey/schedules'])
  @Access({ session: 'member', personalKey: ['flags:read'] })
  @ApiResponse({ status: 200, description: 'The schedules.', schema: { type: 'array', items: SCHEDULE_SCHEMA } })
  async listSchedules(@OrgAuth() auth: OrgAuthContext, @FlagAddressParam() address: FlagAddress) {
    const flagId = await this.flags.idOf(auth, address);
    return (await this.schedules.list(auth, flagId)).map(toScheduleResponse);
  }

  @Post(['flags/:flagId/schedules', 'apps/:appId/flags/:flagKey/schedules'])
  @Access({ session: 'member', personalKey: ['flags:write'] })
  @ApiResponse({ status: 201, description: 'The pending schedule.', schema: SCHEDULE_SCHEMA })
  @ApiResponse(PROPOSED)
  async createSchedule(
    @OrgAuth() auth: OrgAuthContext,
    @Res({ passthrough: true }) response: Response,
    @FlagAddressParam() address: FlagAddress,
    @Body() body: CreateScheduleDto,
  ) {
    const flagId = await this.flags.idOf(auth, address);
    const outcome = await this.changeRequests.submit(auth, { kind: 'schedule', flagId, input: body });
    return answer(response, outcome, toScheduleResponse);
  }

  @Delete(['flags/:flagId/schedules/:scheduleId', 'apps/:appId/flags/:flagKey/schedules/:scheduleId'])
  @Access({ session: 'member', personalKey: ['flags:write'] })
  @HttpCode(204)
  async cancelSchedule(
    @OrgAuth() auth: OrgAuthContext,
    @FlagAddressParam() address: FlagAddress,
    @UuidParam('scheduleId') scheduleId: string,
  ): Promise<void> {
    const flagId = await this.flags.idOf(auth, address);
    await this.schedules.cancel(auth, flagId, scheduleId);
  }
}

/** The change's own answer, or 202 with the change request an environment requiring approval made of it. */
function answer<T, R>(response: Response, outcome: Outcome<T>, map: (applied: T) => R) {
  if ('proposed' in outcome) {
    response.status(202);
    return outcome.proposed;
  }
  return map(outcome.applied);
}
