import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Feature requests with votes, staff comments and their push-channel notifications; support
 * tickets with messages; release notes per app and version with the devices that have seen them.
 */
export class FeedbackSupportReleaseNotes1763727100000 implements MigrationInterface {
  name = 'FeedbackSupportReleaseNotes1763727100000';

  async up(queryRunner: QueryRunner): Promise<void> {
    // A request outlives its app (the app reference is cleared), as the resource allows a null app_id.
    await queryRunner.query(`
      CREATE TABLE feature_requests (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        app_id uuid REFERENCES apps(id) ON DELETE SET NULL,
        title text NOT NULL,
        description text NOT NULL DEFAULT '',
        status text NOT NULL DEFAULT 'pending'
          CHECK (status IN ('pending', 'open', 'planned', 'in_progress', 'shipped', 'declined', 'duplicate')),
        submitter_id text NOT NULL,
        device_hash text,
        vote_count integer NOT NULL DEFAULT 0 CHECK (vote_count >= 0),
        comment_count integer NOT NULL DEFAULT 0 CHECK (comment_count >= 0),
        vote_threshold_notified_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(
      `CREATE INDEX feature_requests_org_votes_idx ON feature_requests (organization_id, vote_count DESC, created_at DESC)`,
    );
    await queryRunner.query(
      `CREATE INDEX feature_requests_org_created_idx ON feature_requests (organization_id, created_at DESC)`,
    );
    await queryRunner.query(`CREATE INDEX feature_requests_app_idx ON feature_requests (app_id, created_at DESC)`);

    // One vote per user and one per device on each request: the unique indexes decide, not a read.
    await queryRunner.query(`
      CREATE TABLE feature_request_votes (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        feature_request_id uuid NOT NULL REFERENCES feature_requests(id) ON DELETE CASCADE,
        voter_id text NOT NULL,
        device_hash text,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(
      `CREATE UNIQUE INDEX feature_request_votes_voter_key ON feature_request_votes (feature_request_id, voter_id)`,
    );
    await queryRunner.query(
      `CREATE UNIQUE INDEX feature_request_votes_device_key ON feature_request_votes (feature_request_id, device_hash)
        WHERE device_hash IS NOT NULL`,
    );

    await queryRunner.query(`
      CREATE TABLE feature_request_comments (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        feature_request_id uuid NOT NULL REFERENCES feature_requests(id) ON DELETE CASCADE,
        author_id text NOT NULL,
        author_type text NOT NULL CHECK (author_type IN ('user', 'admin')),
        body text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(
      `CREATE INDEX feature_request_comments_request_idx ON feature_request_comments (feature_request_id, created_at)`,
    );

    // The push channel: one record per subscriber (submitter and voters) per staff comment.
    await queryRunner.query(`
      CREATE TABLE feedback_notifications (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        app_id uuid REFERENCES apps(id) ON DELETE CASCADE,
        feature_request_id uuid NOT NULL REFERENCES feature_requests(id) ON DELETE CASCADE,
        comment_id uuid NOT NULL REFERENCES feature_request_comments(id) ON DELETE CASCADE,
        subscriber_id text NOT NULL,
        type text NOT NULL CHECK (type IN ('staff_comment')),
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(
      `CREATE INDEX feedback_notifications_subscriber_idx ON feedback_notifications (app_id, subscriber_id, created_at DESC)`,
    );

    await queryRunner.query(`
      CREATE TABLE support_tickets (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        app_id uuid REFERENCES apps(id) ON DELETE SET NULL,
        subject text NOT NULL,
        status text NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'awaiting_reply', 'resolved', 'closed')),
        priority text NOT NULL DEFAULT 'normal' CHECK (priority IN ('low', 'normal', 'high', 'urgent')),
        submitter_id text NOT NULL,
        submitter_email text,
        device_hash text,
        message_count integer NOT NULL DEFAULT 0 CHECK (message_count >= 0),
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(
      `CREATE INDEX support_tickets_org_updated_idx ON support_tickets (organization_id, updated_at DESC)`,
    );
    await queryRunner.query(
      `CREATE INDEX support_tickets_submitter_idx ON support_tickets (app_id, submitter_id, updated_at DESC)`,
    );

    await queryRunner.query(`
      CREATE TABLE support_ticket_messages (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        ticket_id uuid NOT NULL REFERENCES support_tickets(id) ON DELETE CASCADE,
        author_id text NOT NULL,
        author_type text NOT NULL CHECK (author_type IN ('user', 'admin')),
        body text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(
      `CREATE INDEX support_ticket_messages_ticket_idx ON support_ticket_messages (ticket_id, created_at)`,
    );

    // version_key is the canonical form of the version (1.0 = 1.0.0 = v1.0.0+7), so one note per
    // app and version holds however the version is written.
    await queryRunner.query(`
      CREATE TABLE release_notes (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        app_id uuid NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
        version text NOT NULL,
        version_key text NOT NULL,
        title text NOT NULL,
        body text NOT NULL,
        is_published boolean NOT NULL DEFAULT false,
        published_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        CHECK (is_published = (published_at IS NOT NULL))
      )`);
    await queryRunner.query(`CREATE UNIQUE INDEX release_notes_app_version_key ON release_notes (app_id, version_key)`);
    await queryRunner.query(
      `CREATE INDEX release_notes_org_created_idx ON release_notes (organization_id, created_at DESC)`,
    );

    await queryRunner.query(`
      CREATE TABLE release_note_views (
        release_note_id uuid NOT NULL REFERENCES release_notes(id) ON DELETE CASCADE,
        organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        device_id text NOT NULL,
        seen_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (release_note_id, device_id)
      )`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE release_note_views`);
    await queryRunner.query(`DROP TABLE release_notes`);
    await queryRunner.query(`DROP TABLE support_ticket_messages`);
    await queryRunner.query(`DROP TABLE support_tickets`);
    await queryRunner.query(`DROP TABLE feedback_notifications`);
    await queryRunner.query(`DROP TABLE feature_request_comments`);
    await queryRunner.query(`DROP TABLE feature_request_votes`);
    await queryRunner.query(`DROP TABLE feature_requests`);
  }
}
