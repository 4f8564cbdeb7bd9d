import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Push over APNs: an app's token-based credentials (the .p8 key encrypted), the push tokens
 * devices register for their subscriber, and the outbox of pushes a sweep delivers.
 */
export class Push1795568010724 implements MigrationInterface {
  name = 'Push1795568010724';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE push_credentials (
        app_id uuid PRIMARY KEY REFERENCES apps(id) ON DELETE CASCADE,
        organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        key_id text NOT NULL,
        team_id text NOT NULL,
        private_key_encrypted text NOT NULL,
        environment text NOT NULL CHECK (environment IN ('sandbox', 'production')),
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(`
      CREATE TABLE push_tokens (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        app_id uuid NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
        device_token text NOT NULL,
        subscriber_id text NOT NULL,
        key_id text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(`CREATE UNIQUE INDEX push_tokens_app_token_key ON push_tokens (app_id, device_token)`);
    await queryRunner.query(`CREATE INDEX push_tokens_subscriber_idx ON push_tokens (app_id, subscriber_id)`);
    await queryRunner.query(`
      CREATE TABLE push_deliveries (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        app_id uuid NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
        push_token_id uuid REFERENCES push_tokens(id) ON DELETE SET NULL,
        device_token text NOT NULL,
        payload jsonb NOT NULL,
        status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'sent', 'failed', 'unregistered')),
        attempts integer NOT NULL DEFAULT 0,
        next_attempt_at timestamptz NOT NULL DEFAULT now(),
        lease_until timestamptz,
        last_status integer,
        last_error text,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(
      `CREATE INDEX push_deliveries_due_idx ON push_deliveries (next_attempt_at) WHERE status = 'pending'`,
    );
    await queryRunner.query(`CREATE INDEX push_deliveries_created_idx ON push_deliveries (created_at)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE push_deliveries`);
    await queryRunner.query(`DROP TABLE push_tokens`);
    await queryRunner.query(`DROP TABLE push_credentials`);
  }
}
