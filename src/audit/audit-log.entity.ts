import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

@Entity('audit_logs')
export class AuditLog {
  @PrimaryColumn('uuid', { default: () => 'gen_random_uuid()' })
  id!: string;

  @Column('uuid', { name: 'organization_id' })
  organizationId!: string;

  @Column('uuid', { name: 'actor_user_id', nullable: true })
  actorUserId!: string | null;

  @Column('text', { name: 'actor_email', nullable: true })
  actorEmail!: string | null;

  @Column('text')
  action!: string;

  @Column('text', { name: 'resource_type' })
  resourceType!: string;

  @Column('text', { name: 'resource_id', nullable: true })
  resourceId!: string | null;

  @Column('jsonb')
  metadata!: Record<string, unknown>;

  @Column('text', { name: 'ip_address', nullable: true })
  ipAddress!: string | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}
