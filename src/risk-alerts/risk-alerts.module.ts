import { Global, Module } from '@nestjs/common';
import { RiskAlertRulesService } from './risk-alert-rules.service.js';
import { RiskAlertsController } from './risk-alerts.controller.js';
import { RiskAlertsService } from './risk-alerts.service.js';

/** Global: the attestation service hands every recorded device event to RiskAlertsService. */
@Global()
@Module({
  controllers: [RiskAlertsController],
  providers: [RiskAlertsService, RiskAlertRulesService],
  exports: [RiskAlertsService],
})
export class RiskAlertsModule {}
