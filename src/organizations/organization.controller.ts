import { Body, Controller, Delete, Get, HttpCode, Patch, Put, Query, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { Access } from '../common/access/access.decorator.js';
import { OrgAuth, type OrgAuthContext } from '../common/access/auth-context.js';
import { SESSION_COOKIE, destroySession } from '../common/http/session-cookie.js';
import { NotificationPreferencesService } from './notification-preferences.service.js';
import { OrganizationDeletionService } from './organization-deletion.service.js';
import { OrganizationSettingsService } from './organization-settings.service.js';
import {
  AuditLogQueryDto,
  UpdateNotificationPreferencesDto,
  UpdateSettingsDto,
  toAuditEntryResponse,
  toSettingsResponse,
} from './organization.dto.js';
import { QuickstartService } from './quickstart.service.js';
import { pageEnvelope } from '../common/pagination.js';
import { AuditService } from '../audit/audit.service.js';

/** Administration of the session's active organization (interface document: Organization administration). */
@Controller('api/v1/org')
export class OrganizationController {
  constructor(
    private readonly settings: OrganizationSettingsService,
    private readonly preferences: NotificationPreferencesService,
    private readonly audit: AuditService,
    private readonly quickstart: QuickstartService,
    private readonly deletion: OrganizationDeletionService,
  ) {}

  @Get('settings')
  @Access({ session: 'viewer' })
  async getSettings(@OrgAuth() auth: OrgAuthContext) {
    return toSettingsResponse(await this.settings.get(auth.organizationId));
  }

  @Put('settings')
  @Access({ session: 'admin' })
  async updateSettings(@OrgAuth() auth: OrgAuthContext, @Body() body: UpdateSettingsDto) {
    return toSettingsResponse(await this.settings.rename(auth, body.name));
  }

  @Get('notification-preferences')
  @Access({ session: 'viewer' })
  getPreferences(@OrgAuth() auth: OrgAuthContext) {
    return this.preferences.get(auth.organizationId);
  }

  @Patch('notification-preferences')
  @Access({ session: 'admin' })
  updatePreferences(@OrgAuth() auth: OrgAuthContext, @Body() body: UpdateNotificationPreferencesDto) {
    return this.preferences.update(auth, body);
  }

  @Get('billing')
  @Access({ session: 'admin' })
  billing(@OrgAuth() auth: OrgAuthContext) {
    return this.settings.billingSummary(auth.organizationId);
  }

  @Get('audit-log')
  @Access({ session: 'admin' })
  async auditLogPage(@OrgAuth() auth: OrgAuthContext, @Query() query: AuditLogQueryDto) {
    const { items, total } = await this.audit.page(auth.organizationId, query);
    return pageEnvelope('metadata', query, items.map(toAuditEntryResponse), total);
  }

  @Get('quickstart-snippet')
  @Access({ session: 'viewer' })
  quickstartSnippet(@OrgAuth() auth: OrgAuthContext) {
    return this.quickstart.snippet(auth.organizationId);
  }

  /** Owner only; the caller's session ends with the organization. */
  @Delete()
  @Access({ session: 'owner' })
  @HttpCode(204)
  async deleteOrganization(
    @OrgAuth() auth: OrgAuthContext,
    @Req() request: Request,
    @Res({ passthrough: true }) response: Response,
  ): Promise<void> {
    await this.deletion.delete(auth);
    await destroySession(request);
    response.clearCookie(SESSION_COOKIE, { path: '/' });
  }
}
