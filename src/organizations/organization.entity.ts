import { Column, CreateDateColumn, Entity, PrimaryColumn, UpdateDateColumn } from 'typeorm';

@Entity('organizations')
export class Organization {
  @PrimaryColumn('uuid', { default: () => 'gen_random_uuid()' })
  id!: string;

  @Column('text')
  name!: string;

  @Column('text')
  slug!: string;

  /** Raw tier value: free, basic, professional, enterprise (legacy growth, enterprise_plus). */
  @Column('text', { name: 'service_tier' })
  serviceTier!: string;

  @Column('boolean', { name: 'is_active' })
  isActive!: boolean;

  @Column('text', { name: 'billing_email', nullable: true })
  billingEmail!: string | null;

  @Column('text', { name: 'provider_customer_id', nullable: true })
  providerCustomerId!: string | null;

  @Column('text', { name: 'provider_subscription_id', nullable: true })
  providerSubscriptionId!: string | null;

  @Column('timestamptz', { name: 'current_period_end', nullable: true })
  currentPeriodEnd!: Date | null;

  /** The day of month the paid subscription renews on (the provider's cycle anchor), when known. */
  @Column('smallint', { name: 'billing_anchor_day', nullable: true })
  billingAnchorDay!: number | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt!: Date;
}
