import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The day of month a paid subscription renews on (the provider's billing cycle anchor), so a
 * period that ends on a clamped day (Feb 28 of a cycle on the 31st) starts on the anchor (Jan 31).
 * Null: unknown, the period end's own day is used.
 */
export class BillingCycleAnchorDay1795709175753 implements MigrationInterface {
  name = 'BillingCycleAnchorDay1795709175753';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE organizations ADD COLUMN billing_anchor_day smallint CHECK (billing_anchor_day BETWEEN 1 AND 31)`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE organizations DROP COLUMN billing_anchor_day`);
  }
}
