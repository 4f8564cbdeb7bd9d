import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The short code a CLI login shows in the terminal and on the approval page (RFC 8628's user
 * code), so the person approving can tell their own request from someone else's link.
 */
export class CliSessionUserCode1763727320000 implements MigrationInterface {
  name = 'CliSessionUserCode1763727320000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE cli_sessions ADD COLUMN user_code text`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE cli_sessions DROP COLUMN user_code`);
  }
}
