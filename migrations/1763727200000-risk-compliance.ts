import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Organization compliance settings, risk alert rules, and the device event indexes that device
 * details and alert evaluation read by (app, key, time) and (app, time) for failures.
 */
export class RiskCompliance1763727200000 implements MigrationInterface {
  name = 'RiskCompliance1763727200000';

  async up(queryRunner: QueryRunner): Promise<void> {
    // No row means every default; a null list of countries allows every country.
    await queryRunner.query(`
      CREATE TABLE compliance_settings (
        organization_id uuid PRIMARY KEY REFERENCES organizations(id) ON DELETE CASCADE,
        max_risk_score integer NOT NULL DEFAULT 50 CHECK (max_risk_score BETWEEN 0 AND 100),
        min_os_version text,
        min_app_version text,
        block_on_jailbreak boolean NOT NULL DEFAULT false,
        allowed_countries text[] CHECK (allowed_countries IS NULL OR cardinality(allowed_countries) > 0),
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);

    // An app-scoped rule goes with its app: widening it to the whole organization would surprise.
    await queryRunner.query(`
      CREATE TABLE risk_alert_rules (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        app_id uuid REFERENCES apps(id) ON DELETE CASCADE,
        name text NOT NULL,
        condition_type text NOT NULL CHECK (condition_type IN
          ('risk_score_above', 'failed_attestations_per_device', 'failed_attestations_per_app', 'new_devices_per_hour')),
        threshold integer NOT NULL CHECK (threshold >= 0),
        window_minutes integer CHECK (window_minutes BETWEEN 1 AND 1440),
        channel text NOT NULL CHECK (channel IN ('webhook', 'email')),
        cooldown_minutes integer NOT NULL CHECK (cooldown_minutes BETWEEN 1 AND 10080),
        is_active boolean NOT NULL DEFAULT true,
        last_fired_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(`CREATE INDEX risk_alert_rules_org_idx ON risk_alert_rules (organization_id, created_at)`);

    await queryRunner.query(
      `CREATE INDEX device_events_app_key_created_idx ON device_events (app_id, key_id, created_at DESC)`,
    );
    await queryRunner.query(
      `CREATE INDEX device_events_app_failures_idx ON device_events (app_id, created_at DESC) WHERE result = 'failure'`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX device_events_app_failures_idx`);
    await queryRunner.query(`DROP INDEX device_events_app_key_created_idx`);
    await queryRunner.query(`DROP TABLE risk_alert_rules`);
    await queryRunner.query(`DROP TABLE compliance_settings`);
  }
}
