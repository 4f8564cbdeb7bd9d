import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Organization administration: notification preferences, processed billing provider events, and
 * the indexes the invite-expiry and account-deletion jobs and the billing webhook look up by.
 */
export class OrganizationAdmin1763726700000 implements MigrationInterface {
  name = 'OrganizationAdmin1763726700000';

  async up(queryRunner: QueryRunner): Promise<void> {
    // One row per organization, written on the first change; no row reads as the defaults.
    await queryRunner.query(`
      CREATE TABLE notification_preferences (
        organization_id uuid PRIMARY KEY REFERENCES organizations(id) ON DELETE CASCADE,
        new_feature_request boolean NOT NULL DEFAULT true,
        feature_vote_threshold boolean NOT NULL DEFAULT true,
        feature_vote_threshold_count integer NOT NULL DEFAULT 10
          CHECK (feature_vote_threshold_count BETWEEN 1 AND 10000),
        feature_status_change boolean NOT NULL DEFAULT true,
        new_support_ticket boolean NOT NULL DEFAULT true,
        ticket_admin_reply boolean NOT NULL DEFAULT true,
        ticket_resolved boolean NOT NULL DEFAULT true,
        ticket_user_reply boolean NOT NULL DEFAULT true,
        flag_toggle boolean NOT NULL DEFAULT true,
        team_invite boolean NOT NULL DEFAULT true,
        usage_alert boolean NOT NULL DEFAULT true,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);

    // The payment provider's events, each applied at most once (the provider redelivers).
    await queryRunner.query(`
      CREATE TABLE billing_events (
        event_id text PRIMARY KEY,
        event_type text NOT NULL,
        organization_id uuid REFERENCES organizations(id) ON DELETE CASCADE,
        event_created_at timestamptz NOT NULL,
        outcome text NOT NULL CHECK (outcome IN ('applied', 'stale', 'unmatched')),
        received_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(
      `CREATE INDEX billing_events_org_created_idx ON billing_events (organization_id, event_created_at DESC)`,
    );

    await queryRunner.query(
      `CREATE INDEX organizations_provider_customer_idx ON organizations (provider_customer_id)
        WHERE provider_customer_id IS NOT NULL`,
    );
    await queryRunner.query(`CREATE INDEX invites_pending_expiry_idx ON invites (expires_at) WHERE status = 'pending'`);
    await queryRunner.query(
      `CREATE INDEX users_pending_deletion_idx ON users (deletion_requested_at) WHERE status = 'pending_deletion'`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX users_pending_deletion_idx`);
    await queryRunner.query(`DROP INDEX invites_pending_expiry_idx`);
    await queryRunner.query(`DROP INDEX organizations_provider_customer_idx`);
    await queryRunner.query(`DROP TABLE billing_events`);
    await queryRunner.query(`DROP TABLE notification_preferences`);
  }
}
