import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The apps feature's read models for the statements of other features that must stay one
 * statement (decision 0070): whether an app has webhooks enabled (the webhook outbox, inside the
 * transaction of the change it announces) and whether it accepts debug tokens (the debug-token
 * exchange). SQL functions the planner inlines, read by name instead of a pasted fragment.
 */
export class AppSettingsFunctions1795710000000 implements MigrationInterface {
  name = 'AppSettingsFunctions1795710000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE FUNCTION app_webhooks_enabled(app uuid) RETURNS boolean LANGUAGE sql STABLE
         AS $$ SELECT EXISTS (SELECT 1 FROM apps WHERE id = app AND webhook_enabled) $$`,
    );
    await queryRunner.query(
      `CREATE FUNCTION app_debug_tokens_enabled(app uuid) RETURNS boolean LANGUAGE sql STABLE
         AS $$ SELECT debug_tokens_enabled FROM apps WHERE id = app $$`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP FUNCTION app_debug_tokens_enabled(uuid)`);
    await queryRunner.query(`DROP FUNCTION app_webhooks_enabled(uuid)`);
  }
}
