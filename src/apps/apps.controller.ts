import { Body, Controller, Delete, Get, HttpCode, Post, Put, Query } from '@nestjs/common';
import { Access } from '../common/access/access.decorator.js';
import { OrgAuth, type OrgAuthContext } from '../common/access/auth-context.js';
import { InvalidInputStatus } from '../common/validation/validation.js';
import { UuidParam } from '../common/validation/uuid-param.js';
import { toAppResponse } from './app.entity.js';
import { AppStatsService } from './app-stats.service.js';
import { AppUsageQuery, CreateAppDto, UpdateAppDto } from './apps.dto.js';
import { AppsService } from './apps.service.js';

/** Apps of the session's organization: any member reads, Admins and Owners change. */
@Controller('api/v1/apps')
@InvalidInputStatus(400)
export class AppsController {
  constructor(
    private readonly apps: AppsService,
    private readonly stats: AppStatsService,
  ) {}

  @Get()
  @Access({ session: 'viewer', personalKey: ['apps:read'] })
  async list(@OrgAuth() auth: OrgAuthContext) {
    return (await this.apps.list(auth)).map(toAppResponse);
  }

  @Get('stats')
  @Access({ session: 'viewer', personalKey: ['apps:read'] })
  appStats(@OrgAuth() auth: OrgAuthContext) {
    return this.stats.stats(auth);
  }

  @Post()
  @Access({ session: 'admin' })
  async create(@OrgAuth() auth: OrgAuthContext, @Body() body: CreateAppDto) {
    return toAppResponse(await this.apps.create(auth, body));
  }

  @Get(':appID')
  @Access({ session: 'viewer', personalKey: ['apps:read'] })
  async get(@OrgAuth() auth: OrgAuthContext, @UuidParam('appID') id: string) {
    return toAppResponse(await this.apps.get(auth, id));
  }

  @Get(':appID/usage')
  @Access({ session: 'viewer', personalKey: ['apps:read'] })
  async usage(@OrgAuth() auth: OrgAuthContext, @UuidParam('appID') id: string, @Query() query: AppUsageQuery) {
    return this.stats.usage(auth, await this.apps.get(auth, id), query.days ?? 30);
  }

  @Put(':appID')
  @Access({ session: 'admin' })
  async update(@OrgAuth() auth: OrgAuthContext, @UuidParam('appID') id: string, @Body() body: UpdateAppDto) {
    return toAppResponse(await this.apps.update(auth, id, body));
  }

  @Delete(':appID')
  @Access({ session: 'admin' })
  @HttpCode(204)
  async remove(@OrgAuth() auth: OrgAuthContext, @UuidParam('appID') id: string): Promise<void> {
    await this.apps.remove(auth, id);
  }

  @Post(':appID/activate')
  @Access({ session: 'admin' })
  @HttpCode(200)
  async activate(@OrgAuth() auth: OrgAuthContext, @UuidParam('appID') id: string) {
    return toAppResponse(await this.apps.setActive(auth, id, true));
  }

  @Post(':appID/deactivate')
  @Access({ session: 'admin' })
  @HttpCode(200)
  async deactivate(@OrgAuth() auth: OrgAuthContext, @UuidParam('appID') id: string) {
    return toAppResponse(await this.apps.setActive(auth, id, false));
  }

  /** The secret is in this answer only; generating another one replaces it. */
  @Post(':appID/subject-signing-secret')
  @Access({ session: 'admin' })
  @HttpCode(200)
  async rotateSubjectSecret(@OrgAuth() auth: OrgAuthContext, @UuidParam('appID') id: string) {
    const { app, secret } = await this.apps.rotateSubjectSecret(auth, id);
    return { subjectSigningSecret: secret, app: toAppResponse(app) };
  }

  @Post(':appID/set-primary')
  @Access({ session: 'admin' })
  @HttpCode(200)
  async setPrimary(@OrgAuth() auth: OrgAuthContext, @UuidParam('appID') id: string) {
    return toAppResponse(await this.apps.setPrimary(auth, id));
  }
}
