import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Put, Res } from '@nestjs/common';
import type { Response } from 'express';
import { ApiOperation, ApiResponse } from '@nestjs/swagger';
import { Access } from '../common/access/access.decorator.js';
import { OrgAuth, type OrgAuthContext } from '../common/access/auth-context.js';
import { UuidParam } from '../common/validation/uuid-param.js';
import { InvalidInputStatus } from '../common/validation/validation.js';
import { FlagKeyParam } from './flag-key-param.js';
import { ChangeRequestsService } from './change-requests.service.js';
import { FlagSchedulesService } from './flag-schedules.service.js';
import {
  CreateOverrideDto,
  CreateScheduleDto,
  EnvironmentConfigDto,
  RollbackDto,
  SetApprovalDto,
  UpdateFlagDto,
} from './flags.dto.js';
import { PROPOSED, SCHEDULE_SCHEMA } from './flags.openapi.js';
import { FlagsController } from './flags.controller.js';
import { FlagsService } from './flags.service.js';

/**
 * The dashboard's flag routes addressed by key: `/apps/:appId/flags/:flagKey/...` answers exactly
 * as `/flags/:flagId/...` does for the flag of that app with that key (a UUID is taken as the id).
 * Keys are what people and scripts know; ids are what the dashboard links. Each route resolves the
 * key and answers through its twin of FlagsController, so the two addresses cannot drift apart;
 * only the path, its parameters and the route's description are written here.
 */
@Controller('api/v1/dashboard/apps/:appId/flags/:flagKey')
export class FlagsByKeyController {
  private readonly byId: FlagsController;

  constructor(
    private readonly flags: FlagsService,
    schedules: FlagSchedulesService,
    changeRequests: ChangeRequestsService,
  ) {
    this.byId = new FlagsController(flags, schedules, changeRequests);
  }

  private resolve(auth: OrgAuthContext, appId: string, flagKey: string): Promise<string> {
    return this.flags.resolveKey(auth, appId, flagKey);
  }

  @Get()
  @Access({ session: 'viewer', personalKey: ['flags:read'] })
  @ApiOperation({ summary: 'Get a flag by its key' })
  async get(@OrgAuth() auth: OrgAuthContext, @UuidParam('appId') appId: string, @FlagKeyParam() flagKey: string) {
    return this.byId.get(auth, await this.resolve(auth, appId, flagKey));
  }

  @Patch()
  @Access({ session: 'member', personalKey: ['flags:write'] })
  @ApiOperation({ summary: "Update a flag's name, description or default value, by key" })
  @ApiResponse(PROPOSED)
  async update(
    @OrgAuth() auth: OrgAuthContext,
    @Res({ passthrough: true }) response: Response,
    @UuidParam('appId') appId: string,
    @FlagKeyParam() flagKey: string,
    @Body() body: UpdateFlagDto,
  ) {
    return this.byId.update(auth, response, await this.resolve(auth, appId, flagKey), body);
  }

  @Delete()
  @Access({ session: 'member', personalKey: ['flags:write'] })
  @HttpCode(204)
  @ApiOperation({ summary: 'Delete a flag by its key' })
  @ApiResponse(PROPOSED)
  async remove(
    @OrgAuth() auth: OrgAuthContext,
    @Res({ passthrough: true }) response: Response,
    @UuidParam('appId') appId: string,
    @FlagKeyParam() flagKey: string,
  ) {
    return this.byId.remove(auth, response, await this.resolve(auth, appId, flagKey));
  }

  @Put('environments/:environment')
  @Access({ session: 'member', personalKey: ['flags:write'] })
  @ApiOperation({ summary: "Replace one environment's state, value and rules, by flag key" })
  @ApiResponse(PROPOSED)
  async putEnvironment(
    @OrgAuth() auth: OrgAuthContext,
    @Res({ passthrough: true }) response: Response,
    @UuidParam('appId') appId: string,
    @FlagKeyParam() flagKey: string,
    @Param('environment') environment: string,
    @Body() body: EnvironmentConfigDto,
  ) {
    return this.byId.putEnvironment(auth, response, await this.resolve(auth, appId, flagKey), environment, body);
  }

  @Put('environments/:environment/approval')
  @Access({ session: 'admin', personalKey: ['flags:write'] })
  @ApiOperation({ summary: 'Require approved change requests for an environment, by flag key (Enterprise)' })
  async setApproval(
    @OrgAuth() auth: OrgAuthContext,
    @UuidParam('appId') appId: string,
    @FlagKeyParam() flagKey: string,
    @Param('environment') environment: string,
    @Body() body: SetApprovalDto,
  ) {
    return this.byId.setApproval(auth, await this.resolve(auth, appId, flagKey), environment, body);
  }

  @Get('history')
  @Access({ session: 'viewer', personalKey: ['flags:read'] })
  @ApiOperation({ summary: "A flag's versions, newest first, by key" })
  async history(@OrgAuth() auth: OrgAuthContext, @UuidParam('appId') appId: string, @FlagKeyParam() flagKey: string) {
    return this.byId.history(auth, await this.resolve(auth, appId, flagKey));
  }

  @Post('rollback')
  @Access({ session: 'member', personalKey: ['flags:write'] })
  @HttpCode(200)
  @ApiOperation({ summary: 'Restore an earlier version as a new one, by flag key' })
  @ApiResponse(PROPOSED)
  async rollback(
    @OrgAuth() auth: OrgAuthContext,
    @Res({ passthrough: true }) response: Response,
    @UuidParam('appId') appId: string,
    @FlagKeyParam() flagKey: string,
    @Body() body: RollbackDto,
  ) {
    return this.byId.rollback(auth, response, await this.resolve(auth, appId, flagKey), body);
  }

  @Get('overrides')
  @Access({ session: 'viewer', personalKey: ['flags:read'] })
  @ApiOperation({ summary: "A flag's device overrides, newest first, by key" })
  async overrides(@OrgAuth() auth: OrgAuthContext, @UuidParam('appId') appId: string, @FlagKeyParam() flagKey: string) {
    return this.byId.overrides(auth, await this.resolve(auth, appId, flagKey));
  }

  @Post('overrides')
  @Access({ session: 'member', personalKey: ['flags:write'] })
  @InvalidInputStatus(400)
  @ApiOperation({ summary: 'Force a value for one device, by flag key' })
  @ApiResponse(PROPOSED)
  async createOverride(
    @OrgAuth() auth: OrgAuthContext,
    @Res({ passthrough: true }) response: Response,
    @UuidParam('appId') appId: string,
    @FlagKeyParam() flagKey: string,
    @Body() body: CreateOverrideDto,
  ) {
    return this.byId.createOverride(auth, response, await this.resolve(auth, appId, flagKey), body);
  }

  @Delete('overrides/:overrideId')
  @Access({ session: 'member', personalKey: ['flags:write'] })
  @HttpCode(204)
  @ApiOperation({ summary: 'Remove a device override, by flag key' })
  @ApiResponse(PROPOSED)
  async deleteOverride(
    @OrgAuth() auth: OrgAuthContext,
    @Res({ passthrough: true }) response: Response,
    @UuidParam('appId') appId: string,
    @FlagKeyParam() flagKey: string,
    @UuidParam('overrideId') overrideId: string,
  ) {
    return this.byId.deleteOverride(auth, response, await this.resolve(auth, appId, flagKey), overrideId);
  }

  @Get('schedules')
  @Access({ session: 'member', personalKey: ['flags:read'] })
  @ApiOperation({ summary: "A flag's scheduled changes, newest first, by key (Business plan and above)" })
  @ApiResponse({ status: 200, description: 'The schedules.', schema: { type: 'array', items: SCHEDULE_SCHEMA } })
  async listSchedules(
    @OrgAuth() auth: OrgAuthContext,
    @UuidParam('appId') appId: string,
    @FlagKeyParam() flagKey: string,
  ) {
    return this.byId.listSchedules(auth, await this.resolve(auth, appId, flagKey));
  }

  @Post('schedules')
  @Access({ session: 'member', personalKey: ['flags:write'] })
  @ApiOperation({ summary: 'Schedule a change of one environment, by flag key (Business plan and above)' })
  @ApiResponse({ status: 201, description: 'The pending schedule.', schema: SCHEDULE_SCHEMA })
  @ApiResponse(PROPOSED)
  async createSchedule(
    @OrgAuth() auth: OrgAuthContext,
    @Res({ passthrough: true }) response: Response,
    @UuidParam('appId') appId: string,
    @FlagKeyParam() flagKey: string,
    @Body() body: CreateScheduleDto,
  ) {
    return this.byId.createSchedule(auth, response, await this.resolve(auth, appId, flagKey), body);
  }

  @Delete('schedules/:scheduleId')
  @Access({ session: 'member', personalKey: ['flags:write'] })
  @HttpCode(204)
  @ApiOperation({ summary: 'Cancel a pending schedule, by flag key' })
  async cancelSchedule(
    @OrgAuth() auth: OrgAuthContext,
    @UuidParam('appId') appId: string,
    @FlagKeyParam() flagKey: string,
    @UuidParam('scheduleId') scheduleId: string,
  ): Promise<void> {
    await this.byId.cancelSchedule(auth, await this.resolve(auth, appId, flagKey), scheduleId);
  }
}
