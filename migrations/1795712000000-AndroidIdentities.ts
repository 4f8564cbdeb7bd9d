import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * An app's Android build (issue 34): its package name (unique across the service, as a Bundle ID
 * and Team ID pair is: SDK calls name the app by it), the SHA-256 digests of its signing
 * certificates, Play Integrity's decryption and verification keys (sealed with AES-256-GCM, never
 * read back by a route) and the app's verdict policy. Devices say which platform attested them.
 */
export class AndroidIdentities1795712000000 implements MigrationInterface {
  name = 'AndroidIdentities1795712000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE android_identities (
        app_id uuid PRIMARY KEY REFERENCES apps(id) ON DELETE CASCADE,
        organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        package_name text NOT NULL,
        certificate_digests text[] NOT NULL,
        decryption_key_sealed text NOT NULL,
        verification_key_sealed text NOT NULL,
        policy jsonb NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(`CREATE UNIQUE INDEX android_identities_package_key ON android_identities (package_name)`);
    await queryRunner.query(`CREATE INDEX android_identities_org_idx ON android_identities (organization_id)`);
    await queryRunner.query(
      `ALTER TABLE devices ADD COLUMN platform text NOT NULL DEFAULT 'ios' CHECK (platform IN ('ios', 'android'))`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE devices DROP COLUMN platform`);
    await queryRunner.query(`DROP TABLE android_identities`);
  }
}
