import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The devices feature's read of a key's device, as the attestation path reads it (decision 0077):
 * its row, the row's version (`xmin`) and whether its hourly velocity window has ended. Both
 * `DevicesRepository.findByKey` and the challenge's use on refresh (`ChallengesRepository`, which
 * spends the challenge and reads the device in one statement) call it, so the read has one
 * definition. The table stays the devices feature's. A SQL-standard body (BEGIN ATOMIC) with its
 * parameters qualified: PostgreSQL resolves it when it is created, so a later column of `devices`
 * named like a parameter cannot take its place, and a migration cannot change the type of a column
 * it reads without recreating it.
 */
export class DeviceByKey1795719485979 implements MigrationInterface {
  name = 'DeviceByKey1795719485979';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE FUNCTION device_by_key(organization uuid, app uuid, wanted_key text)
      RETURNS TABLE (
        id uuid, public_key_pem text, sign_counter bigint, environment text, client_device_id text,
        subject_id text, subject_verified boolean, device_model text, os_version text, app_version text,
        country text, jailbreak_detected boolean, attestation_count integer, failure_count integer,
        counter_anomalies integer, velocity_count integer, is_blocked boolean,
        first_seen_at timestamp with time zone, version text, velocity_window_expired boolean
      ) LANGUAGE sql STABLE PARALLEL SAFE
      BEGIN ATOMIC
        SELECT d.id, d.public_key_pem, d.sign_counter, d.environment, d.client_device_id, d.subject_id,
               d.subject_verified, d.device_model, d.os_version, d.app_version, d.country, d.jailbreak_detected,
               d.attestation_count, d.failure_count, d.counter_anomalies, d.velocity_count, d.is_blocked,
               d.first_seen_at, d.xmin::text, d.velocity_window_start < now() - interval '1 hour'
          FROM devices d
         WHERE d.app_id = device_by_key.app AND d.key_id = device_by_key.wanted_key
           AND d.organization_id = device_by_key.organization;
      END`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP FUNCTION device_by_key(uuid, uuid, text)`);
  }
}
