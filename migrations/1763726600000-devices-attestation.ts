import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Attested device keys, their events, challenges, monthly-active-device counting, signing keys. */
export class DevicesAttestation1763726600000 implements MigrationInterface {
  name = 'DevicesAttestation1763726600000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE devices (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        app_id uuid NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
        key_id text NOT NULL,
        public_key_pem text NOT NULL,
        sign_counter bigint NOT NULL DEFAULT 0,
        environment text NOT NULL CHECK (environment IN ('development', 'production')),
        receipt bytea,
        client_device_id text NOT NULL DEFAULT '',
        subject_id text,
        device_model text,
        os_version text,
        app_version text,
        country text,
        jailbreak_detected boolean NOT NULL DEFAULT false,
        risk_score integer NOT NULL DEFAULT 0,
        attestation_count integer NOT NULL DEFAULT 0,
        failure_count integer NOT NULL DEFAULT 0,
        counter_anomalies integer NOT NULL DEFAULT 0,
        velocity_window_start timestamptz NOT NULL DEFAULT now(),
        velocity_count integer NOT NULL DEFAULT 0,
        is_blocked boolean NOT NULL DEFAULT false,
        blocked_reason text,
        first_seen_at timestamptz NOT NULL DEFAULT now(),
        last_seen_at timestamptz NOT NULL DEFAULT now(),
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(`CREATE UNIQUE INDEX devices_app_key_key ON devices (app_id, key_id)`);
    await queryRunner.query(`CREATE INDEX devices_org_last_seen_idx ON devices (organization_id, last_seen_at DESC)`);
    await queryRunner.query(`CREATE INDEX devices_org_key_idx ON devices (organization_id, key_id)`);

    await queryRunner.query(`
      CREATE TABLE device_events (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        app_id uuid NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
        device_id uuid REFERENCES devices(id) ON DELETE CASCADE,
        key_id text NOT NULL,
        event_type text NOT NULL CHECK (event_type IN ('attestation', 'assertion')),
        result text NOT NULL CHECK (result IN ('success', 'failure')),
        error_code text,
        risk_score integer,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(
      `CREATE INDEX device_events_org_created_idx ON device_events (organization_id, created_at DESC)`,
    );
    await queryRunner.query(`CREATE INDEX device_events_app_created_idx ON device_events (app_id, created_at DESC)`);
    await queryRunner.query(`CREATE INDEX device_events_device_idx ON device_events (device_id, created_at DESC)`);

    await queryRunner.query(`
      CREATE TABLE attestation_challenges (
        challenge_hash text PRIMARY KEY,
        app_id uuid NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
        expires_at timestamptz NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(`CREATE INDEX attestation_challenges_expiry_idx ON attestation_challenges (expires_at)`);

    await queryRunner.query(`
      CREATE TABLE mad_devices (
        organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        period_start date NOT NULL,
        device_id uuid NOT NULL REFERENCES devices(id) ON DELETE CASCADE,
        counted_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (organization_id, period_start, device_id)
      )`);
    await queryRunner.query(`
      CREATE TABLE mad_counters (
        organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        period_start date NOT NULL,
        active_devices integer NOT NULL DEFAULT 0,
        over_limit_since timestamptz,
        alerts_sent text[] NOT NULL DEFAULT '{}',
        PRIMARY KEY (organization_id, period_start)
      )`);

    await queryRunner.query(`
      CREATE TABLE signing_keys (
        kid text PRIMARY KEY,
        private_key_pem text NOT NULL,
        public_jwk jsonb NOT NULL,
        is_current boolean NOT NULL DEFAULT false,
        retired_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(
      `CREATE UNIQUE INDEX signing_keys_one_current ON signing_keys (is_current) WHERE is_current`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    for (const table of [
      'signing_keys',
      'mad_counters',
      'mad_devices',
      'attestation_challenges',
      'device_events',
      'devices',
    ]) {
      await queryRunner.query(`DROP TABLE ${table}`);
    }
  }
}
