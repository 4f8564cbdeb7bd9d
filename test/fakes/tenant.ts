import { DEFAULT_JWT_CONFIGURATION, DEFAULT_RISK_THRESHOLDS } from '../../src/apps/app.entity.js';
import type { Tenant } from '../../src/apps/tenant-resolver.js';
import { trustAppId, trustOrganizationId } from '../../src/common/access/tenant-id.js';

/**
 * The tenant an SDK call resolves to, as TenantResolver answers it: an active iOS app "Notes" of an
 * active Professional organization with the default token and risk settings; `overrides` change it.
 */
export function fakeTenant(
  organizationId: string,
  appId: string,
  overrides: Partial<Omit<Tenant, 'organizationId' | 'appId'>> = {},
): Tenant {
  return {
    appId: trustAppId(appId),
    appName: 'Notes',
    bundleId: 'com.example.notes',
    teamId: 'ABCDE12345',
    organizationId: trustOrganizationId(organizationId),
    serviceTier: 'professional',
    currentPeriodEnd: null,
    billingAnchorDay: null,
    appActive: true,
    organizationActive: true,
    jwtConfiguration: DEFAULT_JWT_CONFIGURATION,
    riskThresholds: DEFAULT_RISK_THRESHOLDS,
    requireSignedSubject: false,
    subjectSigningSecret: null,
    ...overrides,
  };
}
