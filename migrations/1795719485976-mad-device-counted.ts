import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The usage feature's read model for the device refresh of decision 0062, which must stay one
 * statement: whether the device is counted as monthly active in the organization for every period
 * start given. A true answer is final for the periods (rows are only added to them); a false one
 * sends the caller to `MadService.count`, whose upsert decides. The table stays usage's.
 */
export class MadDeviceCounted1795719485976 implements MigrationInterface {
  name = 'MadDeviceCounted1795719485976';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE FUNCTION mad_device_counted(organization uuid, period_starts date[], device uuid)
      RETURNS boolean LANGUAGE sql STABLE PARALLEL SAFE AS $$
        SELECT (SELECT count(*) FROM mad_devices
                 WHERE organization_id = organization AND device_id = device AND period_start = ANY (period_starts))
               = cardinality(period_starts)
      $$`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP FUNCTION mad_device_counted(uuid, date[], uuid)`);
  }
}
