import { Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit.module.js';
import { DomainEventsModule } from '../common/domain-events/domain-events.module.js';
import { DevicesDataModule } from '../devices/devices-data.module.js';
import { MailModule } from '../mail/mail.module.js';
import { OrganizationsModule } from '../organizations/organizations.module.js';
import { RiskAlertRulesRepository } from './risk-alert-rules.repository.js';
import { RiskAlertRulesService } from './risk-alert-rules.service.js';
import { RiskAlertsController } from './risk-alerts.controller.js';
import { RiskAlertsService } from './risk-alerts.service.js';
import { AppsModule } from '../apps/apps.module.js';

/** Risk alert rules and their evaluation; the attestation service hands every recorded device event to RiskAlertsService. */
@Module({
  imports: [AuditModule, MailModule, OrganizationsModule, AppsModule, DevicesDataModule, DomainEventsModule],
  controllers: [RiskAlertsController],
  providers: [RiskAlertsService, RiskAlertRulesService, RiskAlertRulesRepository],
  exports: [RiskAlertsService],
})
export class RiskAlertsModule {}
