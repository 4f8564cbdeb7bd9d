import { Body, Controller, Delete, Get, HttpCode, Patch, Post } from '@nestjs/common';
import { Access } from '../common/access/access.decorator.js';
import { OrgAuth, type OrgAuthContext } from '../common/access/auth-context.js';
import { UuidParam } from '../common/validation/uuid-param.js';
import { RiskAlertRulesService } from './risk-alert-rules.service.js';
import { CreateRiskAlertRuleDto, UpdateRiskAlertRuleDto, toRiskAlertRuleResponse } from './risk-alerts.dto.js';

/** The session's organization's risk alert rules (`docs/risk.md`): Admins, Business and up. */
@Controller('api/v1/org/risk-alerts')
@Access({ session: 'admin' })
export class RiskAlertsController {
  constructor(private readonly rules: RiskAlertRulesService) {}

  @Get()
  async list(@OrgAuth() auth: OrgAuthContext) {
    return (await this.rules.list(auth)).map(toRiskAlertRuleResponse);
  }

  @Post()
  async create(@OrgAuth() auth: OrgAuthContext, @Body() body: CreateRiskAlertRuleDto) {
    return toRiskAlertRuleResponse(await this.rules.create(auth, body));
  }

  @Get(':ruleId')
  async get(@OrgAuth() auth: OrgAuthContext, @UuidParam('ruleId') id: string) {
    return toRiskAlertRuleResponse(await this.rules.get(auth, id));
  }

  @Patch(':ruleId')
  async update(@OrgAuth() auth: OrgAuthContext, @UuidParam('ruleId') id: string, @Body() body: UpdateRiskAlertRuleDto) {
    return toRiskAlertRuleResponse(await this.rules.update(auth, id, body));
  }

  @Delete(':ruleId')
  @HttpCode(204)
  async remove(@OrgAuth() auth: OrgAuthContext, @UuidParam('ruleId') id: string): Promise<void> {
    await this.rules.remove(auth, id);
  }
}
