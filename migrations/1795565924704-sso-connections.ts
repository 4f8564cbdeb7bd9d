import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Enterprise single sign-on: one OpenID Connect connection per organization, the e-mail domains
 * it answers for (each domain belongs to one connection: the unique key decides a race), and the
 * short-lived sign-in attempts that carry state, nonce and PKCE verifier from start to callback.
 */
export class SsoConnections1795565924704 implements MigrationInterface {
  name = 'SsoConnections1795565924704';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE sso_connections (
        organization_id uuid PRIMARY KEY REFERENCES organizations(id) ON DELETE CASCADE,
        issuer text NOT NULL,
        client_id text NOT NULL,
        client_secret_sealed text NOT NULL,
        allowed_domains text[] NOT NULL,
        default_role text NOT NULL CHECK (default_role IN ('viewer', 'member', 'admin')),
        enforce boolean NOT NULL DEFAULT false,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(`
      CREATE TABLE sso_domains (
        domain text PRIMARY KEY,
        organization_id uuid NOT NULL REFERENCES sso_connections(organization_id) ON DELETE CASCADE
      )`);
    await queryRunner.query(`CREATE INDEX sso_domains_organization_idx ON sso_domains (organization_id)`);
    await queryRunner.query(`
      CREATE TABLE sso_login_attempts (
        state_hash text PRIMARY KEY,
        organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        nonce text NOT NULL,
        code_verifier text NOT NULL,
        cli_session_id uuid,
        expires_at timestamptz NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(`CREATE INDEX sso_login_attempts_expires_idx ON sso_login_attempts (expires_at)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE sso_login_attempts`);
    await queryRunner.query(`DROP TABLE sso_domains`);
    await queryRunner.query(`DROP TABLE sso_connections`);
  }
}
