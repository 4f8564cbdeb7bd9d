import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The compliance feature's read model for statements of other features that must stay one
 * statement (the device refresh of decision 0062): the risk score above which a device of the
 * organization counts as high risk. `compliance_rules` says whether the organization's plan has
 * the feature (else `fallback`, the default, holds); `fallback` also answers while no settings
 * are saved. Callers pass both from `highRiskThresholdInputs(plan)`; the table stays compliance's.
 */
export class ComplianceHighRiskThreshold1795719485975 implements MigrationInterface {
  name = 'ComplianceHighRiskThreshold1795719485975';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE FUNCTION compliance_high_risk_threshold(organization uuid, compliance_rules boolean, fallback integer)
      RETURNS integer LANGUAGE sql STABLE PARALLEL SAFE AS $$
        SELECT CASE WHEN compliance_rules
                    THEN COALESCE((SELECT max_risk_score FROM compliance_settings WHERE organization_id = organization),
                                  fallback)
                    ELSE fallback END
      $$`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP FUNCTION compliance_high_risk_threshold(uuid, boolean, integer)`);
  }
}
