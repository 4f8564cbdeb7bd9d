import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { BillingModule } from '../billing/billing.module.js';
import { AccountController } from './account.controller.js';
import { AccountDeletionJob } from './account-deletion.job.js';
import { AccountDeletionService } from './account-deletion.service.js';
import { AuditLogService } from './audit-log.service.js';
import { NotificationPreferences } from './notification-preferences.entity.js';
import { NotificationPreferencesService } from './notification-preferences.service.js';
import { OrganizationController } from './organization.controller.js';
import { OrganizationDeletionService } from './organization-deletion.service.js';
import { OrganizationSettingsService } from './organization-settings.service.js';
import { QuickstartService } from './quickstart.service.js';

/**
 * Organization administration: settings, notification preferences, billing summary, audit log,
 * quick start, and deleting the organization or one's account. OrganizationsService (creation,
 * membership, slugs) comes from the auth module, which creates organizations at sign-up.
 */
@Module({
  imports: [TypeOrmModule.forFeature([NotificationPreferences]), BillingModule],
  controllers: [OrganizationController, AccountController],
  providers: [
    OrganizationSettingsService,
    NotificationPreferencesService,
    AuditLogService,
    QuickstartService,
    OrganizationDeletionService,
    AccountDeletionService,
    AccountDeletionJob,
  ],
  exports: [NotificationPreferencesService],
})
export class OrganizationsModule {}
