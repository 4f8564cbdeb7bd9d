import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Scheduled flag changes. `flag_id` carries no foreign key on purpose: a schedule outlives the
 * flag it targeted as a `failed` record saying why it never applied.
 */
export class FlagSchedules1795566615165 implements MigrationInterface {
  name = 'FlagSchedules1795566615165';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE feature_flag_schedules (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        app_id uuid NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
        flag_id uuid NOT NULL,
        environment text NOT NULL CHECK (environment IN ('production', 'staging', 'development')),
        run_at timestamptz NOT NULL,
        change jsonb NOT NULL,
        status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'applied', 'failed', 'cancelled')),
        failure_reason text,
        applied_version integer,
        created_by text,
        created_at timestamptz NOT NULL DEFAULT now(),
        applied_at timestamptz
      )`);
    await queryRunner.query(
      `CREATE INDEX feature_flag_schedules_flag_idx ON feature_flag_schedules (flag_id, created_at DESC)`,
    );
    await queryRunner.query(
      `CREATE INDEX feature_flag_schedules_due_idx ON feature_flag_schedules (run_at) WHERE status = 'pending'`,
    );
    await queryRunner.query(`CREATE INDEX feature_flag_schedules_org_idx ON feature_flag_schedules (organization_id)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE feature_flag_schedules`);
  }
}
