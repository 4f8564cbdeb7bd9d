import { Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AuditModule } from '../audit/audit.module.js';
import { AdvisoryLocks } from '../database/advisory-lock.js';
import { AccountController } from './account.controller.js';
import { AccountDeletionJob } from './account-deletion.job.js';
import { AccountDeletionService } from './account-deletion.service.js';
import { Membership } from './membership.entity.js';
import { NotificationPreferences } from './notification-preferences.entity.js';
import { NotificationPreferencesRepository } from './notification-preferences.repository.js';
import { NotificationPreferencesService } from './notification-preferences.service.js';
import { OrganizationController } from './organization.controller.js';
import { Organization } from './organization.entity.js';
import { OrganizationDeletionService } from './organization-deletion.service.js';
import { OrganizationLifecycleService } from './organization-lifecycle.service.js';
import { OrganizationSettingsService } from './organization-settings.service.js';
import { OrganizationSourcesService } from './organization-sources.service.js';
import { OrganizationsRepository } from './organizations.repository.js';
import { OrganizationsService } from './organizations.service.js';
import { PlanService } from './plan.service.js';
import { QuickstartService } from './quickstart.service.js';
import { UsersModule } from '../users/users.module.js';

/**
 * Organizations and their memberships: the owner of both tables (OrganizationsService), the plan
 * gate every feature asks "may this organization use X" (PlanService), and organization
 * administration: settings, notification preferences, the audit log (read through AuditService,
 * its owner), quick start, and deleting the organization or one's account. Features that keep something of an organization outside the
 * cascading tables take part in its removal with a provider marked `@OnOrganizationRemoved()`, and
 * the billing summary's device count and the quick start's app come from usage and apps' providers
 * marked `@OrganizationSource(…)` (found by OrganizationLifecycleService and
 * OrganizationSourcesService when this module starts), so this module imports none of them.
 */
@Module({
  imports: [
    TypeOrmModule.forFeature([Organization, Membership, NotificationPreferences]),
    DiscoveryModule,
    AuditModule,
    UsersModule,
  ],
  controllers: [OrganizationController, AccountController],
  providers: [
    OrganizationsRepository,
    NotificationPreferencesRepository,
    AdvisoryLocks,
    OrganizationsService,
    PlanService,
    OrganizationLifecycleService,
    OrganizationSourcesService,
    OrganizationSettingsService,
    NotificationPreferencesService,
    QuickstartService,
    OrganizationDeletionService,
    AccountDeletionService,
    AccountDeletionJob,
  ],
  exports: [
    OrganizationsService,
    PlanService,
    OrganizationLifecycleService,
    OrganizationSourcesService,
    NotificationPreferencesService,
  ],
})
export class OrganizationsModule {}
