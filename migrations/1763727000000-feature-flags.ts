import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Feature flags per app with per-environment rules, their version history and device overrides. */
export class FeatureFlags1763727000000 implements MigrationInterface {
  name = 'FeatureFlags1763727000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE feature_flags (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        app_id uuid NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
        key text NOT NULL,
        name text NOT NULL,
        description text NOT NULL DEFAULT '',
        value_type text NOT NULL CHECK (value_type IN ('boolean', 'integer', 'double', 'string', 'json')),
        default_value text NOT NULL,
        environments jsonb NOT NULL,
        version integer NOT NULL DEFAULT 1,
        created_by text,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(`CREATE UNIQUE INDEX feature_flags_app_key ON feature_flags (app_id, key)`);
    await queryRunner.query(`CREATE INDEX feature_flags_org_idx ON feature_flags (organization_id)`);

    await queryRunner.query(`
      CREATE TABLE feature_flag_versions (
        flag_id uuid NOT NULL REFERENCES feature_flags(id) ON DELETE CASCADE,
        organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        version integer NOT NULL,
        snapshot jsonb NOT NULL,
        change text NOT NULL,
        changed_by text,
        created_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (flag_id, version)
      )`);

    await queryRunner.query(`
      CREATE TABLE feature_flag_overrides (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        flag_id uuid NOT NULL REFERENCES feature_flags(id) ON DELETE CASCADE,
        device_key_id text NOT NULL,
        forced_value text NOT NULL,
        expires_at timestamptz,
        created_by text,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(
      `CREATE INDEX feature_flag_overrides_flag_idx ON feature_flag_overrides (flag_id, created_at DESC)`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE feature_flag_overrides`);
    await queryRunner.query(`DROP TABLE feature_flag_versions`);
    await queryRunner.query(`DROP TABLE feature_flags`);
  }
}
