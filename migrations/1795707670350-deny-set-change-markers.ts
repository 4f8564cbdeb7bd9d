import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Change markers the device-token deny set reads incrementally (decision 0065): the transaction id
 * (`xid8`) that last changed what a row adds to the deny set, set by a trigger so that every write
 * path, the service's or a hand-written one, leaves it.
 *
 * - `debug_tokens.revoked_xid`: set when a token is revoked after it was exchanged, or exchanged
 *   while revoked; a revoked token never exchanged minted no device token and stays NULL, out of
 *   both partial indexes.
 * - `devices.block_xid`: set whenever `is_blocked` changes (or a row is inserted blocked).
 *
 * A reader keeps `pg_snapshot_xmin` of the snapshot of its last read and next reads the rows
 * whose marker is at least that: every transaction below it had ended when it read, so a row
 * committed out of order is read on the next pass, never skipped.
 */
export class DenySetChangeMarkers1795707670350 implements MigrationInterface {
  name = 'DenySetChangeMarkers1795707670350';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE debug_tokens ADD COLUMN revoked_xid xid8`);
    // Tokens already revoked and exchanged: read by the first load, whatever their marker.
    await queryRunner.query(
      `UPDATE debug_tokens SET revoked_xid = pg_current_xact_id()
        WHERE revoked_at IS NOT NULL AND last_used_at IS NOT NULL`,
    );
    await queryRunner.query(`
      CREATE FUNCTION debug_tokens_revoked_xid() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.revoked_at IS NOT NULL AND NEW.last_used_at IS NOT NULL AND (
          TG_OP = 'INSERT' OR OLD.revoked_at IS NULL OR OLD.last_used_at IS NULL
          OR OLD.revoked_at IS DISTINCT FROM NEW.revoked_at
        ) THEN
          NEW.revoked_xid := pg_current_xact_id();
        END IF;
        RETURN NEW;
      END $$`);
    await queryRunner.query(`
      CREATE TRIGGER debug_tokens_revoked_xid BEFORE INSERT OR UPDATE OF revoked_at, last_used_at ON debug_tokens
        FOR EACH ROW EXECUTE FUNCTION debug_tokens_revoked_xid()`);
    await queryRunner.query(
      `CREATE INDEX debug_tokens_revoked_xid_idx ON debug_tokens (revoked_xid) WHERE revoked_xid IS NOT NULL`,
    );
    await queryRunner.query(
      `CREATE INDEX debug_tokens_exchanged_revoked_idx ON debug_tokens (revoked_at) WHERE revoked_xid IS NOT NULL`,
    );

    await queryRunner.query(`ALTER TABLE devices ADD COLUMN block_xid xid8`);
    await queryRunner.query(`UPDATE devices SET block_xid = pg_current_xact_id() WHERE is_blocked`);
    await queryRunner.query(`
      CREATE FUNCTION devices_block_xid() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF (TG_OP = 'INSERT' AND NEW.is_blocked) OR (TG_OP = 'UPDATE' AND OLD.is_blocked IS DISTINCT FROM NEW.is_blocked) THEN
          NEW.block_xid := pg_current_xact_id();
        END IF;
        RETURN NEW;
      END $$`);
    await queryRunner.query(`
      CREATE TRIGGER devices_block_xid BEFORE INSERT OR UPDATE OF is_blocked ON devices
        FOR EACH ROW EXECUTE FUNCTION devices_block_xid()`);
    await queryRunner.query(`CREATE INDEX devices_block_xid_idx ON devices (block_xid) WHERE block_xid IS NOT NULL`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TRIGGER devices_block_xid ON devices`);
    await queryRunner.query(`DROP FUNCTION devices_block_xid()`);
    await queryRunner.query(`ALTER TABLE devices DROP COLUMN block_xid`);
    await queryRunner.query(`DROP TRIGGER debug_tokens_revoked_xid ON debug_tokens`);
    await queryRunner.query(`DROP FUNCTION debug_tokens_revoked_xid()`);
    await queryRunner.query(`ALTER TABLE debug_tokens DROP COLUMN revoked_xid`);
  }
}
