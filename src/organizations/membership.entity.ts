import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';
import type { Role } from '../common/access/access.decorator.js';

@Entity('memberships')
export class Membership {
  @PrimaryColumn('uuid', { default: () => 'gen_random_uuid()' })
  id!: string;

  @Column('uuid', { name: 'organization_id' })
  organizationId!: string;

  @Column('uuid', { name: 'user_id' })
  userId!: string;

  @Column('text')
  role!: Role;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}
