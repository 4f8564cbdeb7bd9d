import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Tenants and their apps: the rows every other table hangs from. */
export class Initial1763726400000 implements MigrationInterface {
  name = 'Initial1763726400000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE service_settings (
        key text PRIMARY KEY,
        value text NOT NULL,
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(`
      CREATE TABLE organizations (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        name text NOT NULL,
        slug text NOT NULL,
        service_tier text NOT NULL DEFAULT 'free',
        is_active boolean NOT NULL DEFAULT true,
        billing_email text,
        provider_customer_id text,
        provider_subscription_id text,
        current_period_end timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(`CREATE UNIQUE INDEX organizations_slug_key ON organizations (slug)`);
    await queryRunner.query(`
      CREATE TABLE apps (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        app_name text NOT NULL,
        bundle_id text NOT NULL,
        team_id text NOT NULL,
        description text NOT NULL DEFAULT '',
        is_active boolean NOT NULL DEFAULT true,
        is_primary boolean NOT NULL DEFAULT false,
        jwt_configuration jsonb NOT NULL DEFAULT '{}',
        risk_thresholds jsonb NOT NULL DEFAULT '{}',
        analytics_enabled boolean NOT NULL DEFAULT true,
        webhook_enabled boolean NOT NULL DEFAULT true,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(`CREATE UNIQUE INDEX apps_bundle_team_key ON apps (bundle_id, team_id)`);
    await queryRunner.query(`CREATE INDEX apps_organization_idx ON apps (organization_id)`);
    await queryRunner.query(`CREATE UNIQUE INDEX apps_one_primary_per_org ON apps (organization_id) WHERE is_primary`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE apps`);
    await queryRunner.query(`DROP TABLE organizations`);
    await queryRunner.query(`DROP TABLE service_settings`);
  }
}
