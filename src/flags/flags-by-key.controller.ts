import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Put } from '@nestjs/common';
import { ApiOperation, ApiResponse } from '@nestjs/swagger';
import { Access } from '../common/access/access.decorator.js';
import { OrgAuth, type OrgAuthContext } from '../common/access/auth-context.js';
import { UuidParam } from '../common/validation/uuid-param.js';
import { InvalidInputStatus } from '../common/validation/validation.js';
import { toFlagResponse, toOverrideResponse } from './flag.entity.js';
import { FlagKeyParam } from './flag-key-param.js';
import { FlagSchedulesService, toScheduleResponse } from './flag-schedules.service.js';
import { CreateOverrideDto, CreateScheduleDto, EnvironmentConfigDto, RollbackDto, UpdateFlagDto } from './flags.dto.js';
import { SCHEDULE_SCHEMA } from './flags.openapi.js';
import { FlagsService } from './flags.service.js';

/**
 * The dashboard's flag routes addressed by key: `/apps/:appId/flags/:flagKey/...` answers exactly
 * as `/flags/:flagId/...` does for the flag of that app with that key (a UUID is taken as the id).
 * Keys are what people and scripts know; ids are what the dashboard links.
 */
@Controller('api/v1/dashboard/apps/:appId/flags/:flagKey')
export class FlagsByKeyController {
  constructor(
    private readonly flags: FlagsService,
    private readonly schedules: FlagSchedulesService,
  ) {}

  private resolve(auth: OrgAuthContext, appId: string, flagKey: string): Promise<string> {
    return this.flags.resolveKey(auth, appId, flagKey);
  }

  @Get()
  @Access({ session: 'viewer', personalKey: ['flags:read'] })
  @ApiOperation({ summary: 'Get a flag by its key' })
  async get(@OrgAuth() auth: OrgAuthContext, @UuidParam('appId') appId: string, @FlagKeyParam() flagKey: string) {
    return toFlagResponse(await this.flags.get(auth, await this.resolve(auth, appId, flagKey)));
  }

  @Patch()
  @Access({ session: 'member', personalKey: ['flags:write'] })
  @ApiOperation({ summary: "Update a flag's name, description or default value, by key" })
  async update(
    @OrgAuth() auth: OrgAuthContext,
    @UuidParam('appId') appId: string,
    @FlagKeyParam() flagKey: string,
    @Body() body: UpdateFlagDto,
  ) {
    return toFlagResponse(await this.flags.update(auth, await this.resolve(auth, appId, flagKey), body));
  }

  @Delete()
  @Access({ session: 'member', personalKey: ['flags:write'] })
  @HttpCode(204)
  @ApiOperation({ summary: 'Delete a flag by its key' })
  async remove(
    @OrgAuth() auth: OrgAuthContext,
    @UuidParam('appId') appId: string,
    @FlagKeyParam() flagKey: string,
  ): Promise<void> {
    await this.flags.remove(auth, await this.resolve(auth, appId, flagKey));
  }

  @Put('environments/:environment')
  @Access({ session: 'member', personalKey: ['flags:write'] })
  @ApiOperation({ summary: "Replace one environment's state, value and rules, by flag key" })
  async putEnvironment(
    @OrgAuth() auth: OrgAuthContext,
    @UuidParam('appId') appId: string,
    @FlagKeyParam() flagKey: string,
    @Param('environment') environment: string,
    @Body() body: EnvironmentConfigDto,
  ) {
    const flagId = await this.resolve(auth, appId, flagKey);
    return toFlagResponse(await this.flags.putEnvironment(auth, flagId, environment, body));
  }

  @Get('history')
  @Access({ session: 'viewer', personalKey: ['flags:read'] })
  @ApiOperation({ summary: "A flag's versions, newest first, by key" })
  async history(@OrgAuth() auth: OrgAuthContext, @UuidParam('appId') appId: string, @FlagKeyParam() flagKey: string) {
    return this.flags.history(auth, await this.resolve(auth, appId, flagKey));
  }

  @Post('rollback')
  @Access({ session: 'member', personalKey: ['flags:write'] })
  @HttpCode(200)
  @ApiOperation({ summary: 'Restore an earlier version as a new one, by flag key' })
  async rollback(
    @OrgAuth() auth: OrgAuthContext,
    @UuidParam('appId') appId: string,
    @FlagKeyParam() flagKey: string,
    @Body() body: RollbackDto,
  ) {
    return toFlagResponse(await this.flags.rollback(auth, await this.resolve(auth, appId, flagKey), body.version));
  }

  @Get('overrides')
  @Access({ session: 'viewer', personalKey: ['flags:read'] })
  @ApiOperation({ summary: "A flag's device overrides, newest first, by key" })
  async overrides(@OrgAuth() auth: OrgAuthContext, @UuidParam('appId') appId: string, @FlagKeyParam() flagKey: string) {
    return (await this.flags.listOverrides(auth, await this.resolve(auth, appId, flagKey))).map(toOverrideResponse);
  }

  @Post('overrides')
  @Access({ session: 'member', personalKey: ['flags:write'] })
  @InvalidInputStatus(400)
  @ApiOperation({ summary: 'Force a value for one device, by flag key' })
  async createOverride(
    @OrgAuth() auth: OrgAuthContext,
    @UuidParam('appId') appId: string,
    @FlagKeyParam() flagKey: string,
    @Body() body: CreateOverrideDto,
  ) {
    const flagId = await this.resolve(auth, appId, flagKey);
    return toOverrideResponse(await this.flags.createOverride(auth, flagId, body));
  }

  @Delete('overrides/:overrideId')
  @Access({ session: 'member', personalKey: ['flags:write'] })
  @HttpCode(204)
  @ApiOperation({ summary: 'Remove a device override, by flag key' })
  async deleteOverride(
    @OrgAuth() auth: OrgAuthContext,
    @UuidParam('appId') appId: string,
    @FlagKeyParam() flagKey: string,
    @UuidParam('overrideId') overrideId: string,
  ): Promise<void> {
    await this.flags.deleteOverride(auth, await this.resolve(auth, appId, flagKey), overrideId);
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
    return (await this.schedules.list(auth, await this.resolve(auth, appId, flagKey))).map(toScheduleResponse);
  }

  @Post('schedules')
  @Access({ session: 'member', personalKey: ['flags:write'] })
  @ApiOperation({ summary: 'Schedule a change of one environment, by flag key (Business plan and above)' })
  @ApiResponse({ status: 201, description: 'The pending schedule.', schema: SCHEDULE_SCHEMA })
  async createSchedule(
    @OrgAuth() auth: OrgAuthContext,
    @UuidParam('appId') appId: string,
    @FlagKeyParam() flagKey: string,
    @Body() body: CreateScheduleDto,
  ) {
    return toScheduleResponse(await this.schedules.create(auth, await this.resolve(auth, appId, flagKey), body));
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
    await this.schedules.cancel(auth, await this.resolve(auth, appId, flagKey), scheduleId);
  }
}
