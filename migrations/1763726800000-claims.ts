import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Custom claim definitions. Each row holds exactly the configuration column of its type; the
 * claim key is unique per organization in any casing, so two claims can never differ only by case.
 */
export class Claims1763726800000 implements MigrationInterface {
  name = 'Claims1763726800000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE custom_claims (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        claim_key text NOT NULL CHECK (claim_key ~ '^[A-Za-z][A-Za-z0-9_]*$'),
        claim_name text NOT NULL,
        claim_type text NOT NULL CHECK (claim_type IN ('static', 'conditional', 'dynamic', 'external')),
        data_type text NOT NULL CHECK (data_type IN ('string', 'number', 'boolean', 'array', 'object', 'date')),
        description text,
        priority integer NOT NULL DEFAULT 0,
        is_active boolean NOT NULL DEFAULT true,
        static_value text,
        conditional_rules jsonb,
        dynamic_expression text,
        external_config jsonb,
        validation_rules jsonb,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT custom_claims_configuration_check CHECK (
          (static_value IS NOT NULL) = (claim_type = 'static')
          AND (conditional_rules IS NOT NULL) = (claim_type = 'conditional')
          AND (dynamic_expression IS NOT NULL) = (claim_type = 'dynamic')
          AND (external_config IS NOT NULL) = (claim_type = 'external')
        )
      )`);
    await queryRunner.query(
      `CREATE UNIQUE INDEX custom_claims_org_key_key ON custom_claims (organization_id, lower(claim_key))`,
    );
    // Listing and token minting read an organization's claims in evaluation order.
    await queryRunner.query(
      `CREATE INDEX custom_claims_org_priority_idx ON custom_claims (organization_id, priority, claim_key COLLATE "C")`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE custom_claims`);
  }
}
