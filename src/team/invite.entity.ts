import { Column, CreateDateColumn, Entity, PrimaryColumn, UpdateDateColumn } from 'typeorm';
import type { Role } from '../common/access/access.decorator.js';

export type InviteStatus = 'pending' | 'accepted' | 'expired' | 'revoked';

@Entity('invites')
export class Invite {
  @PrimaryColumn('uuid', { default: () => 'gen_random_uuid()' })
  id!: string;

  @Column('uuid', { name: 'organization_id' })
  organizationId!: string;

  @Column('text')
  email!: string;

  @Column('text')
  role!: Role;

  @Column('text', { name: 'token_hash', select: false })
  tokenHash!: string;

  @Column('text')
  status!: InviteStatus;

  @Column('uuid', { name: 'invited_by', nullable: true })
  invitedBy!: string | null;

  @Column('uuid', { name: 'accepted_by', nullable: true })
  acceptedBy!: string | null;

  @Column('timestamptz', { name: 'accepted_at', nullable: true })
  acceptedAt!: Date | null;

  @Column('timestamptz', { name: 'expires_at' })
  expiresAt!: Date;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt!: Date;
}
