import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The usage feature's count of a new device, for the one-statement validate of decision 0078.
 *
 * `mad_has_room`: whether the billing period's count is below `p_limit` (null: no limit), read
 * without a lock. The statement inserts a device only then, so an organization at its limit is
 * declined without an error; the count below decides under the lock.
 *
 * `mad_count_new_device`:
 * counts the device in the calendar month (when given, without a limit) and in the billing
 * period, as `MadRepository.count` does, locking the counters in the same order. The billing
 * count must stay within `p_limit` (null: none): a count that would pass it raises SQLSTATE
 * AT402, which undoes the whole statement, and the caller takes the transactional path, where
 * `MadService.count` decides (grace period or 402); after `mad_has_room`, only when new devices
 * race for the last places. The counter row's lock serialises concurrent new devices of one
 * organization, so the limit cannot be passed by a race. `#variable_conflict error` whatever the
 * server's setting: a later column named like a variable is refused, never taken for it. The
 * tables stay usage's.
 */
export class MadCountNewDevice1795719485980 implements MigrationInterface {
  name = 'MadCountNewDevice1795719485980';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE FUNCTION mad_has_room(p_organization uuid, p_billing date, p_limit integer)
      RETURNS boolean LANGUAGE sql STABLE PARALLEL SAFE
      BEGIN ATOMIC
        SELECT mad_has_room.p_limit IS NULL OR COALESCE((
          SELECT c.active_devices FROM mad_counters c
           WHERE c.organization_id = mad_has_room.p_organization AND c.period_start = mad_has_room.p_billing
        ), 0) < mad_has_room.p_limit;
      END`);
    await queryRunner.query(`
      CREATE FUNCTION mad_count_new_device(p_organization uuid, p_billing date, p_calendar date, p_device uuid, p_limit integer)
      RETURNS integer LANGUAGE plpgsql VOLATILE AS $$
      #variable_conflict error
      DECLARE
        period date;
        counted integer;
      BEGIN
        -- The calendar month (when it differs) first, then the billing period, as MadService.count
        -- locks them; after the loop, counted is the billing period's (null: the device was counted).
        FOREACH period IN ARRAY array_remove(ARRAY[p_calendar, p_billing], NULL) LOOP
          WITH fresh AS (
            INSERT INTO mad_devices (organization_id, period_start, device_id) VALUES (p_organization, period, p_device)
            ON CONFLICT DO NOTHING RETURNING 1
          )
          INSERT INTO mad_counters AS c (organization_id, period_start, active_devices)
          SELECT p_organization, period, 1 FROM fresh
          ON CONFLICT (organization_id, period_start) DO UPDATE SET active_devices = c.active_devices + 1
          RETURNING c.active_devices INTO counted;
        END LOOP;
        IF counted IS NULL THEN
          SELECT c.active_devices INTO counted FROM mad_counters c
           WHERE c.organization_id = p_organization AND c.period_start = p_billing;
        ELSIF p_limit IS NOT NULL AND counted > p_limit THEN
          RAISE EXCEPTION 'the monthly active device limit would be passed' USING ERRCODE = 'AT402';
        END IF;
        RETURN counted;
      END
      $$`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP FUNCTION mad_count_new_device(uuid, date, date, uuid, integer)`);
    await queryRunner.query(`DROP FUNCTION mad_has_room(uuid, date, integer)`);
  }
}
