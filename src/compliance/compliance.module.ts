import { Module } from '@nestjs/common';
import { ComplianceController } from './compliance.controller.js';
import { ComplianceService } from './compliance.service.js';

/**
 * Organization compliance settings. Other features read the settings in force with the plain
 * `complianceSettingsOf` (device details, the `device.high_risk` threshold), so nothing is exported.
 */
@Module({
  controllers: [ComplianceController],
  providers: [ComplianceService],
})
export class ComplianceModule {}
