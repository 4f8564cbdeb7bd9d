import type { MigrationInterface, QueryRunner } from 'typeorm';

/** The deny set of device tokens rereads the blocked devices every few seconds on every instance. */
export class BlockedDevicesIndex1763727330000 implements MigrationInterface {
  name = 'BlockedDevicesIndex1763727330000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE INDEX devices_blocked_idx ON devices (app_id, key_id) WHERE is_blocked`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX devices_blocked_idx`);
  }
}
