import type { EntityManager } from 'typeorm';

/** The interface document's default when an organization sets no compliance `maxRiskScore`. */
export const DEFAULT_HIGH_RISK_THRESHOLD = 50;

/**
 * The risk score above which `device.high_risk` fires: the organization's compliance
 * `maxRiskScore`. Compliance rules do not exist yet, so every organization has the default; the
 * compliance feature replaces this body with a read of its setting (`manager` is the caller's
 * transaction, for that read).
 */
export function highRiskThreshold(_manager: EntityManager, _organizationId: string): Promise<number> {
  return Promise.resolve(DEFAULT_HIGH_RISK_THRESHOLD);
}
