import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The organizations feature's read model for statements of other features that must stay one
 * statement (decision 0070): an organization as a tenant, exposing only what those statements
 * read (its plan, whether it is active, its billing cycle). Replaces the `organizationJoin`
 * fragment they pasted; a simple view the planner inlines, so each statement keeps its plan. The
 * table stays the organizations feature's.
 */
export class OrganizationTenants1795719485978 implements MigrationInterface {
  name = 'OrganizationTenants1795719485978';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE VIEW organization_tenants AS
        SELECT id, name, slug, service_tier AS tier, is_active AS active, current_period_end AS period_end,
               billing_anchor_day AS anchor_day
          FROM organizations`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP VIEW organization_tenants`);
  }
}
