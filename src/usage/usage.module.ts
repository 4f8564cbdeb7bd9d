import { Module } from '@nestjs/common';
import { MailModule } from '../mail/mail.module.js';
import { OrganizationsModule } from '../organizations/organizations.module.js';
import { MadService } from './mad.service.js';
import { UsageAlertsService } from './usage-alerts.service.js';
import { UsageCache } from './usage-cache.js';
import { UsageController } from './usage.controller.js';
import { UsageOrganizationSources } from './usage-organization-sources.js';
import { MadRepository } from './mad.repository.js';
import { UsageService } from './usage.service.js';

/** Monthly active devices: counting (MadService, called by attestation), usage reads and usage alerts. */
@Module({
  imports: [MailModule, OrganizationsModule],
  controllers: [UsageController],
  providers: [MadRepository, UsageService, UsageCache, UsageAlertsService, MadService, UsageOrganizationSources],
  exports: [MadService, UsageService],
})
export class UsageModule {}
