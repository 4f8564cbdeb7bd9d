import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * An app may be Android-only (issue 34, decision 0073): its Bundle ID and Team ID are both set or
 * both null. The unique (bundle_id, team_id) index stays: two apps never share an iOS identity,
 * and rows without one do not collide (nulls are distinct).
 */
export class AndroidOnlyApps1795719485977 implements MigrationInterface {
  name = 'AndroidOnlyApps1795719485977';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      ALTER TABLE apps
        ALTER COLUMN bundle_id DROP NOT NULL,
        ALTER COLUMN team_id DROP NOT NULL,
        ADD CONSTRAINT apps_ios_identity_whole CHECK ((bundle_id IS NULL) = (team_id IS NULL))`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DELETE FROM apps WHERE bundle_id IS NULL`);
    await queryRunner.query(`
      ALTER TABLE apps
        DROP CONSTRAINT apps_ios_identity_whole,
        ALTER COLUMN bundle_id SET NOT NULL,
        ALTER COLUMN team_id SET NOT NULL`);
  }
}
