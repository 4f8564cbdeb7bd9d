import type { OrganizationId } from '../common/access/tenant-id.js';
import { Column, CreateDateColumn, Entity, PrimaryColumn, UpdateDateColumn } from 'typeorm';
import type { Environment, FlagEnvironmentConfig, FlagValueType } from './evaluation/flag-types.js';

@Entity('feature_flags')
export class FeatureFlag {
  @PrimaryColumn('uuid', { default: () => 'gen_random_uuid()' })
  id!: string;

  @Column('uuid', { name: 'organization_id' })
  organizationId!: OrganizationId;

  @Column('uuid', { name: 'app_id' })
  appId!: string;

  @Column('text')
  key!: string;

  @Column('text')
  name!: string;

  @Column('text')
  description!: string;

  @Column('text', { name: 'value_type' })
  valueType!: FlagValueType;

  @Column('text', { name: 'default_value' })
  defaultValue!: string;

  @Column('jsonb')
  environments!: Record<Environment, FlagEnvironmentConfig>;

  @Column('integer')
  version!: number;

  @Column('text', { name: 'created_by', nullable: true })
  createdBy!: string | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt!: Date;
}

@Entity('feature_flag_overrides')
export class FlagOverride {
  @PrimaryColumn('uuid', { default: () => 'gen_random_uuid()' })
  id!: string;

  @Column('uuid', { name: 'organization_id' })
  organizationId!: OrganizationId;

  @Column('uuid', { name: 'flag_id' })
  flagId!: string;

  @Column('text', { name: 'device_key_id' })
  deviceKeyId!: string;

  @Column('text', { name: 'forced_value' })
  forcedValue!: string;

  @Column('timestamptz', { name: 'expires_at', nullable: true })
  expiresAt!: Date | null;

  @Column('text', { name: 'created_by', nullable: true })
  createdBy!: string | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}

/** A feature flag with its configuration per environment. */
export interface FlagResponse {
  id: string;
  appId: string;
  key: string;
  name: string;
  description: string;
  valueType: FeatureFlag['valueType'];
  /** The value in its type, written as a string (`true`, `42`, `{"a":1}`). */
  defaultValue: string;
  environments: FeatureFlag['environments'];
  /** Raised by every change; POST …/rollback takes an earlier one. */
  version: number;
  createdBy: string | null;
  createdAt: Date;
  updatedAt: Date;
}

export function toFlagResponse(flag: FeatureFlag): FlagResponse {
  return {
    id: flag.id,
    appId: flag.appId,
    key: flag.key,
    name: flag.name,
    description: flag.description,
    valueType: flag.valueType,
    defaultValue: flag.defaultValue,
    environments: flag.environments,
    version: flag.version,
    createdBy: flag.createdBy,
    createdAt: flag.createdAt,
    updatedAt: flag.updatedAt,
  };
}

export interface FlagOverrideResponse {
  id: string;
  flagId: string;
  /** The App Attest key id of the device the value is forced for. */
  deviceKeyId: string;
  forcedValue: string;
  expiresAt: Date | null;
  createdAt: Date;
  createdBy: string | null;
}

export function toOverrideResponse(override: FlagOverride): FlagOverrideResponse {
  return {
    id: override.id,
    flagId: override.flagId,
    deviceKeyId: override.deviceKeyId,
    forcedValue: override.forcedValue,
    expiresAt: override.expiresAt,
    createdAt: override.createdAt,
    createdBy: override.createdBy,
  };
}
