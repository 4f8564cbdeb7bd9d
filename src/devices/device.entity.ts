import { Column, CreateDateColumn, Entity, PrimaryColumn, UpdateDateColumn } from 'typeorm';

export type AttestationEnvironment = 'development' | 'production';
export type DeviceEventType = 'attestation' | 'assertion' | 'subject_changed';
export type DeviceEventResult = 'success' | 'failure';

/**
 * An attested App Attest key of an app (`devices`): its public key and assertion counter, what the
 * device reports about itself, and its risk signals. A key id is unique per app. Owned by the
 * devices feature: every read and write goes through `DevicesRepository`.
 */
@Entity('devices')
export class Device {
  @PrimaryColumn('uuid', { default: () => 'gen_random_uuid()' })
  id!: string;

  @Column('uuid', { name: 'organization_id' })
  organizationId!: string;

  @Column('uuid', { name: 'app_id' })
  appId!: string;

  @Column('text', { name: 'key_id' })
  keyId!: string;

  @Column('text', { name: 'public_key_pem' })
  publicKeyPem!: string;

  /** bigint: the driver answers a string. */
  @Column('bigint', { name: 'sign_counter', default: 0 })
  signCounter!: string;

  @Column('text')
  environment!: AttestationEnvironment;

  @Column('bytea', { nullable: true })
  receipt!: Buffer | null;

  /** The optional device id the client sends; '' when it sent none. */
  @Column('text', { name: 'client_device_id', default: '' })
  clientDeviceId!: string;

  @Column('text', { name: 'subject_id', nullable: true })
  subjectId!: string | null;

  @Column('boolean', { name: 'subject_verified', default: false })
  subjectVerified!: boolean;

  @Column('text', { name: 'device_model', nullable: true })
  deviceModel!: string | null;

  @Column('text', { name: 'os_version', nullable: true })
  osVersion!: string | null;

  @Column('text', { name: 'app_version', nullable: true })
  appVersion!: string | null;

  /** ISO 3166-1 alpha-2, upper case. */
  @Column('text', { nullable: true })
  country!: string | null;

  @Column('boolean', { name: 'jailbreak_detected', default: false })
  jailbreakDetected!: boolean;

  @Column('integer', { name: 'risk_score', default: 0 })
  riskScore!: number;

  @Column('integer', { name: 'attestation_count', default: 0 })
  attestationCount!: number;

  @Column('integer', { name: 'failure_count', default: 0 })
  failureCount!: number;

  @Column('integer', { name: 'counter_anomalies', default: 0 })
  counterAnomalies!: number;

  @Column('timestamptz', { name: 'velocity_window_start' })
  velocityWindowStart!: Date;

  @Column('integer', { name: 'velocity_count', default: 0 })
  velocityCount!: number;

  @Column('boolean', { name: 'is_blocked', default: false })
  isBlocked!: boolean;

  @Column('text', { name: 'blocked_reason', nullable: true })
  blockedReason!: string | null;

  @Column('timestamptz', { name: 'first_seen_at' })
  firstSeenAt!: Date;

  @Column('timestamptz', { name: 'last_seen_at' })
  lastSeenAt!: Date;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt!: Date;
}

/**
 * One validate, refresh, debug exchange or subject change of a key (`device_events`). `deviceId`
 * is null for an attempt by a key not (yet) known; `debug` marks debug-token exchanges.
 */
@Entity('device_events')
export class DeviceEvent {
  @PrimaryColumn('uuid', { default: () => 'gen_random_uuid()' })
  id!: string;

  @Column('uuid', { name: 'organization_id' })
  organizationId!: string;

  @Column('uuid', { name: 'app_id' })
  appId!: string;

  @Column('uuid', { name: 'device_id', nullable: true })
  deviceId!: string | null;

  @Column('text', { name: 'key_id' })
  keyId!: string;

  @Column('text', { name: 'event_type' })
  eventType!: DeviceEventType;

  @Column('text')
  result!: DeviceEventResult;

  @Column('text', { name: 'error_code', nullable: true })
  errorCode!: string | null;

  @Column('integer', { name: 'risk_score', nullable: true })
  riskScore!: number | null;

  @Column('boolean', { default: false })
  debug!: boolean;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}
