import { Global, Module } from '@nestjs/common';
import { DomainEventsModule } from '../common/domain-events/domain-events.module.js';
import { DevicesDataModule } from '../devices/devices-data.module.js';
import { RiskAlertRulesService } from './risk-alert-rules.service.js';
import { RiskAlertsController } from './risk-alerts.controller.js';
import { RiskAlertsService } from './risk-alerts.service.js';

/** Global: the attestation service hands every recorded device event to RiskAlertsService. */
@Global()
@Module({
  imports: [DevicesDataModule, DomainEventsModule],
  controllers: [RiskAlertsController],
  providers: [RiskAlertsService, RiskAlertRulesService],
  exports: [RiskAlertsService],
})
export class RiskAlertsModule {}
