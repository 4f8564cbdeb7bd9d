import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

export type TokenPurpose = 'verify_email' | 'reset_password' | 'email_change';

/** A one-time token sent by mail; only its SHA-256 hash is stored. */
@Entity('auth_tokens')
export class AuthToken {
  @PrimaryColumn('uuid', { default: () => 'gen_random_uuid()' })
  id!: string;

  @Column('uuid', { name: 'user_id' })
  userId!: string;

  @Column('text')
  purpose!: TokenPurpose;

  @Column('text', { name: 'token_hash' })
  tokenHash!: string;

  @Column('text', { name: 'new_email', nullable: true })
  newEmail!: string | null;

  @Column('timestamptz', { name: 'expires_at' })
  expiresAt!: Date;

  @Column('timestamptz', { name: 'used_at', nullable: true })
  usedAt!: Date | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}
