import { Controller, Get, HttpCode, Post, Query } from '@nestjs/common';
import { ApiOperation, ApiResponse } from '@nestjs/swagger';
import { Access } from '../common/access/access.decorator.js';
import { OrgAuth, type OrgAuthContext } from '../common/access/auth-context.js';
import { UuidParam } from '../common/validation/uuid-param.js';
import { ChangeRequestsService } from './change-requests.service.js';
import { ListChangeRequestsQuery } from './flags.dto.js';
import { CHANGE_REQUEST_SCHEMA, CHANGE_REQUEST_WITH_DIFF_SCHEMA } from './flags.openapi.js';

/** Change requests of environments that require approval (Enterprise). */
@Controller('api/v1/dashboard/change-requests')
export class ChangeRequestsController {
  constructor(private readonly requests: ChangeRequestsService) {}

  @Get()
  @Access({ session: 'viewer', personalKey: ['flags:read'] })
  @ApiOperation({ summary: 'Change requests, newest first, by state and flag (Enterprise)' })
  @ApiResponse({ status: 200, description: 'At most 500.', schema: { type: 'array', items: CHANGE_REQUEST_SCHEMA } })
  list(@OrgAuth() auth: OrgAuthContext, @Query() query: ListChangeRequestsQuery) {
    return this.requests.list(auth, query);
  }

  @Get(':requestId')
  @Access({ session: 'viewer', personalKey: ['flags:read'] })
  @ApiOperation({ summary: 'A change request with the diff it would apply' })
  @ApiResponse({ status: 200, description: 'The request.', schema: CHANGE_REQUEST_WITH_DIFF_SCHEMA })
  get(@OrgAuth() auth: OrgAuthContext, @UuidParam('requestId') id: string) {
    return this.requests.get(auth, id);
  }

  @Post(':requestId/approve')
  @Access({ session: 'admin', personalKey: ['flags:write'] })
  @HttpCode(200)
  @ApiOperation({ summary: 'Approve a pending change request (an Admin other than its author)' })
  @ApiResponse({ status: 200, description: 'The approved request.', schema: CHANGE_REQUEST_WITH_DIFF_SCHEMA })
  approve(@OrgAuth() auth: OrgAuthContext, @UuidParam('requestId') id: string) {
    return this.requests.approve(auth, id);
  }

  @Post(':requestId/reject')
  @Access({ session: 'admin', personalKey: ['flags:write'] })
  @HttpCode(200)
  @ApiOperation({ summary: 'Reject a pending change request (an Admin other than its author)' })
  @ApiResponse({ status: 200, description: 'The rejected request.', schema: CHANGE_REQUEST_WITH_DIFF_SCHEMA })
  reject(@OrgAuth() auth: OrgAuthContext, @UuidParam('requestId') id: string) {
    return this.requests.reject(auth, id);
  }

  @Post(':requestId/apply')
  @Access({ session: 'member', personalKey: ['flags:write'] })
  @HttpCode(200)
  @ApiOperation({
    summary: 'Apply an approved change request (its author or an Admin); 409 when stale',
    description: 'Does what the direct change does: new flag version, audit entry, webhook, stream update, notices.',
  })
  @ApiResponse({ status: 200, description: 'The applied request.', schema: CHANGE_REQUEST_WITH_DIFF_SCHEMA })
  apply(@OrgAuth() auth: OrgAuthContext, @UuidParam('requestId') id: string) {
    return this.requests.apply(auth, id);
  }
}
