import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The housekeeping job deletes expired CLI login sessions and e-mail tokens by expiry. */
export class ExpiredCredentialsIndexes1763727310000 implements MigrationInterface {
  name = 'ExpiredCredentialsIndexes1763727310000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE INDEX cli_sessions_expiry_idx ON cli_sessions (expires_at)`);
    await queryRunner.query(`CREATE INDEX auth_tokens_expiry_idx ON auth_tokens (expires_at)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX auth_tokens_expiry_idx`);
    await queryRunner.query(`DROP INDEX cli_sessions_expiry_idx`);
  }
}
