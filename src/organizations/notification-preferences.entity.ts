import { Column, CreateDateColumn, Entity, PrimaryColumn, UpdateDateColumn } from 'typeorm';

/** An organization's notification switches; no row means every default. */
@Entity('notification_preferences')
export class NotificationPreferences {
  @PrimaryColumn('uuid', { name: 'organization_id' })
  organizationId!: string;

  @Column('boolean', { name: 'new_feature_request' })
  newFeatureRequest!: boolean;

  @Column('boolean', { name: 'feature_vote_threshold' })
  featureVoteThreshold!: boolean;

  @Column('integer', { name: 'feature_vote_threshold_count' })
  featureVoteThresholdCount!: number;

  @Column('boolean', { name: 'feature_status_change' })
  featureStatusChange!: boolean;

  @Column('boolean', { name: 'new_support_ticket' })
  newSupportTicket!: boolean;

  @Column('boolean', { name: 'ticket_admin_reply' })
  ticketAdminReply!: boolean;

  @Column('boolean', { name: 'ticket_resolved' })
  ticketResolved!: boolean;

  @Column('boolean', { name: 'ticket_user_reply' })
  ticketUserReply!: boolean;

  @Column('boolean', { name: 'flag_toggle' })
  flagToggle!: boolean;

  @Column('boolean', { name: 'team_invite' })
  teamInvite!: boolean;

  @Column('boolean', { name: 'usage_alert' })
  usageAlert!: boolean;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt!: Date;
}
