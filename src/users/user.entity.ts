import { Column, CreateDateColumn, Entity, PrimaryColumn, UpdateDateColumn } from 'typeorm';

export type UserStatus = 'active' | 'disabled' | 'suspended' | 'pending_deletion';

@Entity('users')
export class User {
  @PrimaryColumn('uuid', { default: () => 'gen_random_uuid()' })
  id!: string;

  @Column('text')
  email!: string;

  @Column('text', { name: 'password_hash', select: false })
  passwordHash!: string;

  @Column('text')
  status!: UserStatus;

  @Column('timestamptz', { name: 'email_verified_at', nullable: true })
  emailVerifiedAt!: Date | null;

  @Column('boolean', { name: 'is_super_admin' })
  isSuperAdmin!: boolean;

  @Column('timestamptz', { name: 'deletion_requested_at', nullable: true })
  deletionRequestedAt!: Date | null;

  @Column('timestamptz', { name: 'last_login_at', nullable: true })
  lastLoginAt!: Date | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt!: Date;

  /** Active and verified: the account may sign in. */
  get isActive(): boolean {
    return this.status === 'active' && this.emailVerifiedAt !== null;
  }
}
