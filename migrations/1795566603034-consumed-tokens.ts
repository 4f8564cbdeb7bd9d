import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Device tokens a backend consumed through POST /api/v1/tokens/verify (`consume: true`): one row
 * per `jti`, kept until the token expires, so a second consume on any instance is refused.
 */
export class ConsumedTokens1795566603034 implements MigrationInterface {
  name = 'ConsumedTokens1795566603034';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE consumed_tokens (
        jti text PRIMARY KEY,
        organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        app_id uuid NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
        expires_at timestamptz NOT NULL,
        consumed_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(`CREATE INDEX consumed_tokens_expiry_idx ON consumed_tokens (expires_at)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE consumed_tokens`);
  }
}
