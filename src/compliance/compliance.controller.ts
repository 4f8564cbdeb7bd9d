import { Body, Controller, Get, Put } from '@nestjs/common';
import { Access } from '../common/access/access.decorator.js';
import { OrgAuth, type OrgAuthContext } from '../common/access/auth-context.js';
import { UpdateComplianceDto, toComplianceResponse } from './compliance.dto.js';
import { ComplianceService } from './compliance.service.js';

/** The session's organization's compliance settings (`docs/risk.md`). */
@Controller('api/v1/org/compliance')
export class ComplianceController {
  constructor(private readonly compliance: ComplianceService) {}

  @Get()
  @Access({ session: 'viewer' })
  async get(@OrgAuth() auth: OrgAuthContext) {
    return toComplianceResponse(await this.compliance.get(auth));
  }

  @Put()
  @Access({ session: 'admin' })
  async update(@OrgAuth() auth: OrgAuthContext, @Body() body: UpdateComplianceDto) {
    return toComplianceResponse(await this.compliance.update(auth, body));
  }
}
