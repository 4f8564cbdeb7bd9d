import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * SSO domains proven by DNS, and SSO sign-ins bound to the accounts that accepted them.
 *
 * - Every connection gets a token of its own, published by the organization as the TXT record
 *   `_attestly-challenge.<domain>`. A listed domain stays inert until that record is found
 *   (`verified_at`); re-checks that no longer find it clear `verified_at` again. Several
 *   organizations may list a domain; only one may hold it verified (partial unique index). Domains
 *   listed before this migration start unverified.
 * - `sso_account_links`: an existing account a provider may sign in, because the provider created
 *   it or the account's owner linked it with the account's password.
 * - `sso_pending_links`: a provider's verified answer about an existing account, kept ten minutes
 *   until the account's owner confirms the link with the password.
 */
export class SsoVerifiedDomains1795707767135 implements MigrationInterface {
  name = 'SsoVerifiedDomains1795707767135';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE sso_connections ADD COLUMN domain_token text`);
    await queryRunner.query(
      `UPDATE sso_connections SET domain_token = replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', '')`,
    );
    await queryRunner.query(`ALTER TABLE sso_connections ALTER COLUMN domain_token SET NOT NULL`);
    await queryRunner.query(`ALTER TABLE sso_domains DROP CONSTRAINT sso_domains_pkey`);
    await queryRunner.query(`ALTER TABLE sso_domains ADD PRIMARY KEY (organization_id, domain)`);
    await queryRunner.query(`
      ALTER TABLE sso_domains
        ADD COLUMN verified_at timestamptz,
        ADD COLUMN checked_at timestamptz,
        ADD COLUMN check_error text,
        ADD COLUMN created_at timestamptz NOT NULL DEFAULT now()`);
    await queryRunner.query(
      `CREATE UNIQUE INDEX sso_domains_verified_domain_uidx ON sso_domains (domain) WHERE verified_at IS NOT NULL`,
    );
    await queryRunner.query(
      `CREATE INDEX sso_domains_recheck_idx ON sso_domains (checked_at) WHERE verified_at IS NOT NULL`,
    );
    await queryRunner.query(`
      CREATE TABLE sso_account_links (
        user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        issuer text NOT NULL,
        subject text NOT NULL,
        created_by text NOT NULL CHECK (created_by IN ('provider', 'account')),
        created_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (user_id, organization_id)
      )`);
    await queryRunner.query(`CREATE INDEX sso_account_links_organization_idx ON sso_account_links (organization_id)`);
    await queryRunner.query(`
      CREATE TABLE sso_pending_links (
        token_hash text PRIMARY KEY,
        user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        email text NOT NULL,
        issuer text NOT NULL,
        subject text NOT NULL,
        cli_session_id uuid,
        expires_at timestamptz NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(`CREATE INDEX sso_pending_links_expires_idx ON sso_pending_links (expires_at)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE sso_pending_links`);
    await queryRunner.query(`DROP TABLE sso_account_links`);
    await queryRunner.query(`DROP INDEX sso_domains_recheck_idx`);
    await queryRunner.query(`DROP INDEX sso_domains_verified_domain_uidx`);
    await queryRunner.query(
      `ALTER TABLE sso_domains DROP COLUMN verified_at, DROP COLUMN checked_at, DROP COLUMN check_error, DROP COLUMN created_at`,
    );
    await queryRunner.query(`ALTER TABLE sso_domains DROP CONSTRAINT sso_domains_pkey`);
    await queryRunner.query(
      `DELETE FROM sso_domains a USING sso_domains b WHERE a.domain = b.domain AND a.ctid > b.ctid`,
    );
    await queryRunner.query(`ALTER TABLE sso_domains ADD PRIMARY KEY (domain)`);
    await queryRunner.query(`ALTER TABLE sso_connections DROP COLUMN domain_token`);
  }
}
