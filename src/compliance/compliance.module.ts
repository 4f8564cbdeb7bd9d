import { Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit.module.js';
import { OrganizationsModule } from '../organizations/organizations.module.js';
import { ComplianceController } from './compliance.controller.js';
import { ComplianceRepository } from './compliance.repository.js';
import { ComplianceService } from './compliance.service.js';

/**
 * Organization compliance settings. Other features read the settings in force through
 * ComplianceService.settingsInForce (device details, the `device.high_risk` threshold), and the
 * one-statement device refresh reads the SQL function `compliance_high_risk_threshold`.
 */
@Module({
  imports: [AuditModule, OrganizationsModule],
  controllers: [ComplianceController],
  providers: [ComplianceRepository, ComplianceService],
  exports: [ComplianceService],
})
export class ComplianceModule {}
