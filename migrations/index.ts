import { Initial1763726400000 } from './1763726400000-initial.js';
import { Identity1763726500000 } from './1763726500000-identity.js';
import { DevicesAttestation1763726600000 } from './1763726600000-devices-attestation.js';
import { OrganizationAdmin1763726700000 } from './1763726700000-organization-admin.js';
import { Claims1763726800000 } from './1763726800000-claims.js';
import { WebhooksEntitlements1763726900000 } from './1763726900000-webhooks-entitlements.js';
import { FeatureFlags1763727000000 } from './1763727000000-feature-flags.js';
import { FeedbackSupportReleaseNotes1763727100000 } from './1763727100000-feedback-support-release-notes.js';
import { RiskCompliance1763727200000 } from './1763727200000-risk-compliance.js';
import { ExpiredCredentialsIndexes1763727310000 } from './1763727310000-expired-credentials-indexes.js';
import { CliSessionUserCode1763727320000 } from './1763727320000-cli-session-user-code.js';
import { BlockedDevicesIndex1763727330000 } from './1763727330000-blocked-devices-index.js';
import { DebugTokens1795565762125 } from './1795565762125-debug-tokens.js';
import { SsoConnections1795565924704 } from './1795565924704-sso-connections.js';
import { ConsumedTokens1795566603034 } from './1795566603034-consumed-tokens.js';
import { FlagSchedules1795566615165 } from './1795566615165-flag-schedules.js';
import { Push1795568010724 } from './1795568010724-push.js';
import { SubjectBinding1795568839690 } from './1795568839690-subject-binding.js';
import { FlagChangeRequests1795569346871 } from './1795569346871-flag-change-requests.js';
import { DenySetChangeMarkers1795707670350 } from './1795707670350-deny-set-change-markers.js';
import { SsoVerifiedDomains1795707767135 } from './1795707767135-sso-verified-domains.js';
import { FlagProtections1795707899176 } from './1795707899176-flag-protections.js';
import { BillingCycleAnchorDay1795709175753 } from './1795709175753-billing-cycle-anchor-day.js';
import { AppSettingsFunctions1795710000000 } from './1795710000000-app-settings-functions.js';
import { AndroidIdentities1795712000000 } from './1795712000000-AndroidIdentities.js';
import { ComplianceHighRiskThreshold1795719485975 } from './1795719485975-compliance-high-risk-threshold.js';
import { MadDeviceCounted1795719485976 } from './1795719485976-mad-device-counted.js';
import { AndroidOnlyApps1795719485977 } from './1795719485977-android-only-apps.js';
import { OrganizationTenants1795719485978 } from './1795719485978-organization-tenants.js';
import { DeviceByKey1795719485979 } from './1795719485979-device-by-key.js';
import { MadCountNewDevice1795719485980 } from './1795719485980-mad-count-new-device.js';
import { WebhooksListening1795719485981 } from './1795719485981-webhooks-listening.js';

/** Every migration, in order. Migrations are never edited after they land. */
export const migrations = [
  Initial1763726400000,
  Identity1763726500000,
  DevicesAttestation1763726600000,
  OrganizationAdmin1763726700000,
  Claims1763726800000,
  WebhooksEntitlements1763726900000,
  FeatureFlags1763727000000,
  FeedbackSupportReleaseNotes1763727100000,
  RiskCompliance1763727200000,
  ExpiredCredentialsIndexes1763727310000,
  CliSessionUserCode1763727320000,
  BlockedDevicesIndex1763727330000,
  DebugTokens1795565762125,
  SsoConnections1795565924704,
  ConsumedTokens1795566603034,
  FlagSchedules1795566615165,
  Push1795568010724,
  SubjectBinding1795568839690,
  FlagChangeRequests1795569346871,
  DenySetChangeMarkers1795707670350,
  SsoVerifiedDomains1795707767135,
  FlagProtections1795707899176,
  BillingCycleAnchorDay1795709175753,
  AppSettingsFunctions1795710000000,
  AndroidIdentities1795712000000,
  ComplianceHighRiskThreshold1795719485975,
  MadDeviceCounted1795719485976,
  AndroidOnlyApps1795719485977,
  OrganizationTenants1795719485978,
  DeviceByKey1795719485979,
  MadCountNewDevice1795719485980,
  WebhooksListening1795719485981,
];
