import { AppException } from '../common/errors/app-exception.js';

export const riskAlertRuleLimitReached = (max: number) =>
  new AppException(403, 'risk_alert_rule_limit_reached', `An organization has at most ${max} risk alert rules`, {
    hint: 'Delete or reuse a rule you no longer need',
  });
