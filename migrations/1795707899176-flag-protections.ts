import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Protection belongs to an environment of a flag key, not to the flag row (decision 0064): a
 * flag deleted and created again under the same key is protected as before. Backfilled from
 * the `requireApproval` the flags' environments held. Change requests take every kind of write
 * that can change what a protected environment serves; a schedule remembers the approved change
 * request that made it (those stay valid when they run, the others need approval then).
 */
export class FlagProtections1795707899176 implements MigrationInterface {
  name = 'FlagProtections1795707899176';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE feature_flag_protections (
        organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        app_id uuid NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
        flag_key text NOT NULL,
        environment text NOT NULL CHECK (environment IN ('production', 'staging', 'development')),
        created_by text,
        created_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (app_id, flag_key, environment)
      )`);
    await queryRunner.query(
      `CREATE INDEX feature_flag_protections_org_idx ON feature_flag_protections (organization_id)`,
    );
    await queryRunner.query(`
      INSERT INTO feature_flag_protections (organization_id, app_id, flag_key, environment)
      SELECT f.organization_id, f.app_id, f.key, e.environment
        FROM feature_flags f CROSS JOIN unnest(ARRAY['production', 'staging', 'development']) AS e(environment)
       WHERE (f.environments -> e.environment ->> 'requireApproval')::boolean IS TRUE`);
    await queryRunner.query(
      `ALTER TABLE feature_flag_change_requests DROP CONSTRAINT feature_flag_change_requests_kind_check`,
    );
    await queryRunner.query(`
      ALTER TABLE feature_flag_change_requests ADD CONSTRAINT feature_flag_change_requests_kind_check
        CHECK (kind IN ('environment', 'rollback', 'schedule', 'update', 'deletion', 'creation', 'override',
                        'override_removal'))`);
    await queryRunner.query(`ALTER TABLE feature_flag_schedules ADD COLUMN change_request_id uuid`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE feature_flag_schedules DROP COLUMN change_request_id`);
    await queryRunner.query(
      `DELETE FROM feature_flag_change_requests WHERE kind NOT IN ('environment', 'rollback', 'schedule')`,
    );
    await queryRunner.query(
      `ALTER TABLE feature_flag_change_requests DROP CONSTRAINT feature_flag_change_requests_kind_check`,
    );
    await queryRunner.query(`
      ALTER TABLE feature_flag_change_requests ADD CONSTRAINT feature_flag_change_requests_kind_check
        CHECK (kind IN ('environment', 'rollback', 'schedule'))`);
    await queryRunner.query(`DROP TABLE feature_flag_protections`);
  }
}
