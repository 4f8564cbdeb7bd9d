import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Subject binding: an app may accept `subjectId` only when its tenant's backend signed it (HMAC
 * with the app's secret, kept so it can verify); a device remembers whether its subject was
 * verified; a subject change on refresh is a device event.
 */
export class SubjectBinding1795568839690 implements MigrationInterface {
  name = 'SubjectBinding1795568839690';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE apps ADD COLUMN require_signed_subject boolean NOT NULL DEFAULT false,
                        ADD COLUMN subject_signing_secret text`,
    );
    await queryRunner.query(`ALTER TABLE devices ADD COLUMN subject_verified boolean NOT NULL DEFAULT false`);
    await queryRunner.query(
      `ALTER TABLE device_events DROP CONSTRAINT device_events_event_type_check,
         ADD CONSTRAINT device_events_event_type_check
           CHECK (event_type IN ('attestation', 'assertion', 'subject_changed'))`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DELETE FROM device_events WHERE event_type = 'subject_changed'`);
    await queryRunner.query(
      `ALTER TABLE device_events DROP CONSTRAINT device_events_event_type_check,
         ADD CONSTRAINT device_events_event_type_check CHECK (event_type IN ('attestation', 'assertion'))`,
    );
    await queryRunner.query(`ALTER TABLE devices DROP COLUMN subject_verified`);
    await queryRunner.query(`ALTER TABLE apps DROP COLUMN require_signed_subject, DROP COLUMN subject_signing_secret`);
  }
}
