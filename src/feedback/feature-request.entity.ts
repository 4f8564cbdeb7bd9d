import { Column, CreateDateColumn, Entity, PrimaryColumn, UpdateDateColumn } from 'typeorm';

export const FEATURE_STATUSES = [
  'pending',
  'open',
  'planned',
  'in_progress',
  'shipped',
  'declined',
  'duplicate',
] as const;
export type FeatureStatus = (typeof FEATURE_STATUSES)[number];

export const AUTHOR_TYPES = ['user', 'admin'] as const;
export type AuthorType = (typeof AUTHOR_TYPES)[number];

@Entity('feature_requests')
export class FeatureRequest {
  @PrimaryColumn('uuid', { default: () => 'gen_random_uuid()' })
  id!: string;

  @Column('uuid', { name: 'organization_id' })
  organizationId!: string;

  @Column('uuid', { name: 'app_id', nullable: true })
  appId!: string | null;

  @Column('text')
  title!: string;

  @Column('text')
  description!: string;

  @Column('text')
  status!: FeatureStatus;

  @Column('text', { name: 'submitter_id' })
  submitterId!: string;

  @Column('text', { name: 'device_hash', nullable: true })
  deviceHash!: string | null;

  @Column('integer', { name: 'vote_count' })
  voteCount!: number;

  @Column('integer', { name: 'comment_count' })
  commentCount!: number;

  /** When the Admins were told the request reached the vote threshold; they are told once. */
  @Column('timestamptz', { name: 'vote_threshold_notified_at', nullable: true })
  voteThresholdNotifiedAt!: Date | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt!: Date;
}

@Entity('feature_request_comments')
export class FeatureRequestComment {
  @PrimaryColumn('uuid', { default: () => 'gen_random_uuid()' })
  id!: string;

  @Column('uuid', { name: 'organization_id' })
  organizationId!: string;

  @Column('uuid', { name: 'feature_request_id' })
  featureRequestId!: string;

  @Column('text', { name: 'author_id' })
  authorId!: string;

  @Column('text', { name: 'author_type' })
  authorType!: AuthorType;

  @Column('text')
  body!: string;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}

@Entity('feature_request_votes')
export class FeatureRequestVote {
  @PrimaryColumn('uuid', { default: () => 'gen_random_uuid()' })
  id!: string;

  @Column('uuid', { name: 'organization_id' })
  organizationId!: string;

  @Column('uuid', { name: 'feature_request_id' })
  featureRequestId!: string;

  @Column('text', { name: 'voter_id' })
  voterId!: string;

  @Column('text', { name: 'device_hash', nullable: true })
  deviceHash!: string | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}

/** A record on a request's push channel: what a subscriber's device lists to learn of staff comments. */
@Entity('feedback_notifications')
export class FeedbackNotification {
  @PrimaryColumn('uuid', { default: () => 'gen_random_uuid()' })
  id!: string;

  @Column('uuid', { name: 'organization_id' })
  organizationId!: string;

  @Column('uuid', { name: 'app_id', nullable: true })
  appId!: string | null;

  @Column('uuid', { name: 'feature_request_id' })
  featureRequestId!: string;

  @Column('uuid', { name: 'comment_id' })
  commentId!: string;

  @Column('text', { name: 'subscriber_id' })
  subscriberId!: string;

  @Column('text')
  type!: 'staff_comment';

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}
