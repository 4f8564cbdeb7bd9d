import { Body, Controller, Delete, Get, HttpCode, Post, Put } from '@nestjs/common';
import { Access } from '../common/access/access.decorator.js';
import { OrgAuth, type OrgAuthContext } from '../common/access/auth-context.js';
import { InvalidInputStatus } from '../common/validation/validation.js';
import { UuidParam } from '../common/validation/uuid-param.js';
import { toClaimResponse } from './claim-response.js';
import {
  CreateClaimDto,
  parseBulkClaims,
  PreviewClaimDto,
  ReorderClaimsDto,
  TestClaimDto,
  UpdateClaimDto,
  type TestContextDto,
} from './claims.dto.js';
import { ClaimsService } from './claims.service.js';
import { previewDeviceContext } from './preview-device.js';

function deviceOf(context: TestContextDto | undefined) {
  return previewDeviceContext(context?.deviceProfile, context?.additionalData);
}

/** Custom claims of the session's organization: any member reads and tests, Admins change. */
@Controller('api/v1/claims')
@InvalidInputStatus(400)
export class ClaimsController {
  constructor(private readonly claims: ClaimsService) {}

  @Get()
  @Access({ session: 'viewer' })
  async list(@OrgAuth() auth: OrgAuthContext) {
    return (await this.claims.list(auth)).map(toClaimResponse);
  }

  @Post()
  @Access({ session: 'admin' })
  async create(@OrgAuth() auth: OrgAuthContext, @Body() body: CreateClaimDto) {
    return toClaimResponse(await this.claims.create(auth, body));
  }

  @Post('bulk')
  @Access({ session: 'admin' })
  async bulk(@OrgAuth() auth: OrgAuthContext, @Body() body: unknown) {
    return (await this.claims.bulkCreate(auth, await parseBulkClaims(body))).map(toClaimResponse);
  }

  @Put('reorder')
  @Access({ session: 'admin' })
  @HttpCode(204)
  async reorder(@OrgAuth() auth: OrgAuthContext, @Body() body: ReorderClaimsDto): Promise<void> {
    await this.claims.reorder(auth, body.claimIds);
  }

  @Post('test')
  @Access({ session: 'viewer' })
  @HttpCode(200)
  test(@OrgAuth() auth: OrgAuthContext, @Body() body: TestClaimDto) {
    return this.claims.test(auth, body.claimConfiguration, deviceOf(body.testContext));
  }

  @Get(':claimID')
  @Access({ session: 'viewer' })
  async get(@OrgAuth() auth: OrgAuthContext, @UuidParam('claimID') id: string) {
    return toClaimResponse(await this.claims.get(auth, id));
  }

  @Put(':claimID')
  @Access({ session: 'admin' })
  async update(@OrgAuth() auth: OrgAuthContext, @UuidParam('claimID') id: string, @Body() body: UpdateClaimDto) {
    return toClaimResponse(await this.claims.update(auth, id, body));
  }

  @Delete(':claimID')
  @Access({ session: 'admin' })
  @HttpCode(204)
  async remove(@OrgAuth() auth: OrgAuthContext, @UuidParam('claimID') id: string): Promise<void> {
    await this.claims.remove(auth, id);
  }

  @Post(':claimID/preview')
  @Access({ session: 'viewer' })
  @HttpCode(200)
  async preview(@OrgAuth() auth: OrgAuthContext, @UuidParam('claimID') id: string, @Body() body: PreviewClaimDto) {
    return this.claims.preview(auth, await this.claims.get(auth, id), deviceOf(body.testContext));
  }
}
