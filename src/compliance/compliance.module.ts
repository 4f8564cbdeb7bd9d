import { Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit.module.js';
import { OrganizationsModule } from '../organizations/organizations.module.js';
import { ComplianceController } from './compliance.controller.js';
import { ComplianceService } from './compliance.service.js';

/**
 * Organization compliance settings. Other features read the settings in force with the plain
 * `complianceSettingsOf` (device details, the `device.high_risk` threshold), so nothing is exported.
 */
@Module({
  imports: [AuditModule, OrganizationsModule],
  controllers: [ComplianceController],
  providers: [ComplianceService],
})
export class ComplianceModule {}
