import { Column, CreateDateColumn, Entity, PrimaryColumn, UpdateDateColumn } from 'typeorm';
import type { ApiKeyScope } from '../common/access/access.decorator.js';

export const API_KEY_TYPES = ['gpat', 'aat', 'service'] as const;
export type ApiKeyType = (typeof API_KEY_TYPES)[number];

/** An API key; the key itself is shown once and only its SHA-256 hash is kept. */
@Entity('api_keys')
export class ApiKey {
  @PrimaryColumn('uuid', { default: () => 'gen_random_uuid()' })
  id!: string;

  @Column('uuid', { name: 'organization_id' })
  organizationId!: string;

  @Column('uuid', { name: 'created_by', nullable: true })
  createdBy!: string | null;

  @Column('text')
  name!: string;

  @Column('text', { name: 'key_type' })
  keyType!: ApiKeyType;

  @Column('text')
  prefix!: string;

  @Column('text', { name: 'key_hash', select: false })
  keyHash!: string;

  @Column('text', { array: true })
  scopes!: ApiKeyScope[];

  @Column('timestamptz', { name: 'last_used_at', nullable: true })
  lastUsedAt!: Date | null;

  @Column('timestamptz', { name: 'expires_at', nullable: true })
  expiresAt!: Date | null;

  @Column('timestamptz', { name: 'revoked_at', nullable: true })
  revokedAt!: Date | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt!: Date;
}
