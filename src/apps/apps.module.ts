import { Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AuditModule } from '../audit/audit.module.js';
import { DevicesDataModule } from '../devices/devices-data.module.js';
import { DevicesModule } from '../devices/devices.module.js';
import { OrganizationsModule } from '../organizations/organizations.module.js';
import { AndroidIdentityRepository } from './android-identity.repository.js';
import { App } from './app.entity.js';
import { AppStatsService } from './app-stats.service.js';
import { AppsDenySetSources } from './apps-deny-set-sources.js';
import { AppsOrganizationRemoval } from './apps-organization-removal.js';
import { AppsOrganizationSources } from './apps-organization-sources.js';
import { AppsController } from './apps.controller.js';
import { AppsRepository } from './apps.repository.js';
import { AppsService } from './apps.service.js';
import { TenantCacheInvalidation } from './tenant-cache-invalidation.js';
import { TenantResolver } from './tenant-resolver.js';

/**
 * Apps (tenants of the SDK routes): management, statistics, and the tenant resolver that maps an
 * SDK request's bundle and team ids to its app. The tenant cache follows the token revocations
 * DenySet hears (devices), and apps provides that deny set its inactive apps.
 */
@Module({
  imports: [
    DiscoveryModule,
    TypeOrmModule.forFeature([App]),
    AuditModule,
    OrganizationsModule,
    DevicesDataModule,
    DevicesModule,
  ],
  controllers: [AppsController],
  providers: [
    AppsService,
    AppsRepository,
    AppStatsService,
    TenantResolver,
    TenantCacheInvalidation,
    AppsOrganizationRemoval,
    AppsOrganizationSources,
    AppsDenySetSources,
    AndroidIdentityRepository,
  ],
  exports: [TenantResolver, AppsService, AppsRepository, AndroidIdentityRepository],
})
export class AppsModule {}
