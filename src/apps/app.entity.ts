import { Column, CreateDateColumn, Entity, PrimaryColumn, UpdateDateColumn } from 'typeorm';

export interface JwtConfiguration {
  overrideExpirationTime: number | null;
  includeAppMetadata: boolean;
  customAudience: string | null;
  customIssuer: string | null;
}

export interface RiskThresholds {
  maxAllowedRiskScore: number;
  blockOnJailbreak: boolean;
  minAttestationCount: number;
  maxDeviceAge: number | null;
  requireAppStoreReceipt: boolean;
}

export const DEFAULT_JWT_CONFIGURATION: JwtConfiguration = {
  overrideExpirationTime: null,
  includeAppMetadata: true,
  customAudience: null,
  customIssuer: null,
};

export const DEFAULT_RISK_THRESHOLDS: RiskThresholds = {
  maxAllowedRiskScore: 80,
  blockOnJailbreak: false,
  minAttestationCount: 0,
  maxDeviceAge: null,
  requireAppStoreReceipt: false,
};

@Entity('apps')
export class App {
  @PrimaryColumn('uuid', { default: () => 'gen_random_uuid()' })
  id!: string;

  @Column('uuid', { name: 'organization_id' })
  organizationId!: string;

  @Column('text', { name: 'app_name' })
  appName!: string;

  /** Null with teamId for an Android-only app (its identity is in android_identities). */
  @Column('text', { name: 'bundle_id', nullable: true })
  bundleId!: string | null;

  @Column('text', { name: 'team_id', nullable: true })
  teamId!: string | null;

  @Column('text')
  description!: string;

  @Column('boolean', { name: 'is_active' })
  isActive!: boolean;

  @Column('boolean', { name: 'is_primary' })
  isPrimary!: boolean;

  @Column('jsonb', { name: 'jwt_configuration' })
  jwtConfiguration!: Partial<JwtConfiguration>;

  @Column('jsonb', { name: 'risk_thresholds' })
  riskThresholds!: Partial<RiskThresholds>;

  @Column('boolean', { name: 'analytics_enabled' })
  analyticsEnabled!: boolean;

  @Column('boolean', { name: 'webhook_enabled' })
  webhookEnabled!: boolean;

  /** Accept `subjectId` at validate and refresh only when signed with the subject signing secret. */
  @Column('boolean', { name: 'require_signed_subject', default: false })
  requireSignedSubject!: boolean;

  /** The HMAC key of subject signatures: kept so it can verify, shown once when generated. */
  @Column('text', { name: 'subject_signing_secret', nullable: true })
  subjectSigningSecret!: string | null;

  /** Simulator and CI builds may exchange debug tokens for device tokens; teams switch it off once they ship. */
  @Column('boolean', { name: 'debug_tokens_enabled', default: true })
  debugTokensEnabled!: boolean;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt!: Date;
}

export function jwtConfigurationOf(app: Pick<App, 'jwtConfiguration'>): JwtConfiguration {
  return { ...DEFAULT_JWT_CONFIGURATION, ...app.jwtConfiguration };
}

export function riskThresholdsOf(app: Pick<App, 'riskThresholds'>): RiskThresholds {
  return { ...DEFAULT_RISK_THRESHOLDS, ...app.riskThresholds };
}

/** An app of the organization: its iOS identity, an Android one (GET /api/v1/apps/:appID/android), or both. */
export interface AppResponse {
  id: string;
  appName: string;
  /** Null for an Android-only app. */
  bundleId: string | null;
  /** The Apple developer Team ID; null for an Android-only app. */
  teamId: string | null;
  description: string;
  isActive: boolean;
  /** The app the organization's quick start and defaults use. */
  isPrimary: boolean;
  jwtConfiguration: JwtConfiguration;
  riskThresholds: RiskThresholds;
  analyticsEnabled: boolean;
  webhookEnabled: boolean;
  /** Attestations must carry a subject signed by the app maker's backend. */
  requireSignedSubject: boolean;
  /** A subject signing secret exists (the secret itself is shown once, when generated). */
  hasSubjectSigningSecret: boolean;
  /** Debug tokens (Simulator, CI) may be exchanged for device tokens of this app. */
  debugTokensEnabled: boolean;
  createdAt: Date;
  updatedAt: Date;
}

export function toAppResponse(app: App): AppResponse {
  return {
    id: app.id,
    appName: app.appName,
    bundleId: app.bundleId,
    teamId: app.teamId,
    description: app.description,
    isActive: app.isActive,
    isPrimary: app.isPrimary,
    jwtConfiguration: jwtConfigurationOf(app),
    riskThresholds: riskThresholdsOf(app),
    analyticsEnabled: app.analyticsEnabled,
    webhookEnabled: app.webhookEnabled,
    requireSignedSubject: app.requireSignedSubject,
    hasSubjectSigningSecret: app.subjectSigningSecret !== null,
    debugTokensEnabled: app.debugTokensEnabled,
    createdAt: app.createdAt,
    updatedAt: app.updatedAt,
  };
}
