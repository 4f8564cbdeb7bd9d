import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Debug tokens: per-app secrets a Simulator or CI runner exchanges for a device token marked
 * debug (no App Attest). Only the SHA-256 of the secret is stored. Device events gain a debug
 * marker; apps gain the switch that turns debug tokens off.
 */
export class DebugTokens1795565762125 implements MigrationInterface {
  name = 'DebugTokens1795565762125';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE debug_tokens (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        app_id uuid NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
        name text NOT NULL,
        prefix text NOT NULL,
        token_hash text NOT NULL UNIQUE,
        created_by uuid REFERENCES users(id) ON DELETE SET NULL,
        expires_at timestamptz,
        revoked_at timestamptz,
        last_used_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(`CREATE INDEX debug_tokens_app_idx ON debug_tokens (app_id, created_at DESC)`);
    await queryRunner.query(
      `CREATE INDEX debug_tokens_revoked_idx ON debug_tokens (revoked_at) WHERE revoked_at IS NOT NULL`,
    );
    await queryRunner.query(`ALTER TABLE apps ADD COLUMN debug_tokens_enabled boolean NOT NULL DEFAULT true`);
    await queryRunner.query(`ALTER TABLE device_events ADD COLUMN debug boolean NOT NULL DEFAULT false`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE device_events DROP COLUMN debug`);
    await queryRunner.query(`ALTER TABLE apps DROP COLUMN debug_tokens_enabled`);
    await queryRunner.query(`DROP TABLE debug_tokens`);
  }
}
