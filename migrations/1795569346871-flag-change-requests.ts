import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Change requests for flag environments that require approval. Like schedules, `flag_id` has no
 * foreign key: a request outlives a deleted flag in the audit trail (it can then only be stale).
 */
export class FlagChangeRequests1795569346871 implements MigrationInterface {
  name = 'FlagChangeRequests1795569346871';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE feature_flag_change_requests (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        app_id uuid NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
        flag_id uuid NOT NULL,
        flag_key text NOT NULL,
        kind text NOT NULL CHECK (kind IN ('environment', 'rollback', 'schedule')),
        environment text CHECK (environment IN ('production', 'staging', 'development')),
        payload jsonb NOT NULL,
        before jsonb NOT NULL,
        base_version integer NOT NULL,
        state text NOT NULL DEFAULT 'pending'
          CHECK (state IN ('pending', 'approved', 'rejected', 'applied', 'stale')),
        author_user_id uuid,
        author_email text,
        decided_by text,
        decided_at timestamptz,
        applied_by text,
        applied_at timestamptz,
        applied_version integer,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(
      `CREATE INDEX feature_flag_change_requests_org_idx
         ON feature_flag_change_requests (organization_id, created_at DESC)`,
    );
    await queryRunner.query(
      `CREATE INDEX feature_flag_change_requests_flag_idx ON feature_flag_change_requests (flag_id, state)`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE feature_flag_change_requests`);
  }
}
