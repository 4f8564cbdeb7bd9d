import { Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { AuditModule } from '../audit/audit.module.js';
import { ComplianceModule } from '../compliance/compliance.module.js';
import { OrganizationsModule } from '../organizations/organizations.module.js';
import { RateLimitModule } from '../rate-limit/rate-limit.module.js';
import { DenySet } from './deny-set.js';
import { DenySetSourcesService } from './deny-set-sources.service.js';
import { DeviceAnalyticsService } from './device-analytics.service.js';
import { DevicesDataModule } from './devices-data.module.js';
import { AnalyticsController, DevicesController } from './devices.controller.js';
import { DevicesService } from './devices.service.js';

/** Device records (list, block) and the analytics read endpoints (DESIGN.md section 4, Devices). */
@Module({
  imports: [DiscoveryModule, RateLimitModule, AuditModule, OrganizationsModule, ComplianceModule, DevicesDataModule],
  controllers: [DevicesController, AnalyticsController],
  providers: [DevicesService, DeviceAnalyticsService, DenySet, DenySetSourcesService],
  exports: [DevicesService, DeviceAnalyticsService, DenySet, DenySetSourcesService, DevicesDataModule],
})
export class DevicesModule {}
