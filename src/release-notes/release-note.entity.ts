import { Column, CreateDateColumn, Entity, PrimaryColumn, UpdateDateColumn } from 'typeorm';

@Entity('release_notes')
export class ReleaseNote {
  @PrimaryColumn('uuid', { default: () => 'gen_random_uuid()' })
  id!: string;

  @Column('uuid', { name: 'organization_id' })
  organizationId!: string;

  @Column('uuid', { name: 'app_id' })
  appId!: string;

  /** As the author wrote it. */
  @Column('text')
  version!: string;

  /** The canonical form, unique per app (see versionKey). */
  @Column('text', { name: 'version_key' })
  versionKey!: string;

  @Column('text')
  title!: string;

  @Column('text')
  body!: string;

  @Column('boolean', { name: 'is_published' })
  isPublished!: boolean;

  @Column('timestamptz', { name: 'published_at', nullable: true })
  publishedAt!: Date | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt!: Date;
}
