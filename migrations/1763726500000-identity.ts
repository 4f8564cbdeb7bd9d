import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Accounts, memberships, sessions, one-time tokens, invites, API keys, CLI logins, audit log. */
export class Identity1763726500000 implements MigrationInterface {
  name = 'Identity1763726500000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE users (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        email text NOT NULL,
        password_hash text NOT NULL,
        status text NOT NULL DEFAULT 'active'
          CHECK (status IN ('active', 'disabled', 'suspended', 'pending_deletion')),
        email_verified_at timestamptz,
        is_super_admin boolean NOT NULL DEFAULT false,
        deletion_requested_at timestamptz,
        last_login_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(`CREATE UNIQUE INDEX users_email_key ON users (lower(email))`);

    await queryRunner.query(`
      CREATE TABLE memberships (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        role text NOT NULL CHECK (role IN ('viewer', 'member', 'admin', 'owner')),
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(`CREATE UNIQUE INDEX memberships_org_user_key ON memberships (organization_id, user_id)`);
    await queryRunner.query(`CREATE INDEX memberships_user_idx ON memberships (user_id)`);

    await queryRunner.query(`
      CREATE TABLE sessions (
        sid text PRIMARY KEY,
        user_id uuid REFERENCES users(id) ON DELETE CASCADE,
        data jsonb NOT NULL,
        expires_at timestamptz NOT NULL
      )`);
    await queryRunner.query(`CREATE INDEX sessions_user_idx ON sessions (user_id)`);
    await queryRunner.query(`CREATE INDEX sessions_expiry_idx ON sessions (expires_at)`);

    await queryRunner.query(`
      CREATE TABLE auth_tokens (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        purpose text NOT NULL CHECK (purpose IN ('verify_email', 'reset_password', 'email_change')),
        token_hash text NOT NULL,
        new_email text,
        expires_at timestamptz NOT NULL,
        used_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(`CREATE UNIQUE INDEX auth_tokens_hash_key ON auth_tokens (token_hash)`);
    await queryRunner.query(`CREATE INDEX auth_tokens_user_idx ON auth_tokens (user_id, purpose)`);

    await queryRunner.query(`
      CREATE TABLE invites (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        email text NOT NULL,
        role text NOT NULL CHECK (role IN ('viewer', 'member', 'admin', 'owner')),
        token_hash text NOT NULL,
        status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'accepted', 'expired', 'revoked')),
        invited_by uuid REFERENCES users(id) ON DELETE SET NULL,
        accepted_by uuid REFERENCES users(id) ON DELETE SET NULL,
        accepted_at timestamptz,
        expires_at timestamptz NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(`CREATE UNIQUE INDEX invites_token_key ON invites (token_hash)`);
    await queryRunner.query(`CREATE INDEX invites_org_idx ON invites (organization_id, status)`);
    await queryRunner.query(
      `CREATE UNIQUE INDEX invites_one_pending_per_email ON invites (organization_id, lower(email)) WHERE status = 'pending'`,
    );

    await queryRunner.query(`
      CREATE TABLE api_keys (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        created_by uuid REFERENCES users(id) ON DELETE SET NULL,
        name text NOT NULL,
        key_type text NOT NULL CHECK (key_type IN ('gpat', 'aat', 'service')),
        prefix text NOT NULL,
        key_hash text NOT NULL,
        scopes text[] NOT NULL DEFAULT '{}',
        last_used_at timestamptz,
        expires_at timestamptz,
        revoked_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(`CREATE UNIQUE INDEX api_keys_hash_key ON api_keys (key_hash)`);
    await queryRunner.query(`CREATE INDEX api_keys_org_idx ON api_keys (organization_id)`);

    await queryRunner.query(`
      CREATE TABLE cli_sessions (
        id_hash text PRIMARY KEY,
        status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'approved', 'active', 'denied')),
        user_id uuid REFERENCES users(id) ON DELETE CASCADE,
        organization_id uuid REFERENCES organizations(id) ON DELETE CASCADE,
        api_key_id uuid REFERENCES api_keys(id) ON DELETE SET NULL,
        expires_at timestamptz NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);

    await queryRunner.query(`
      CREATE TABLE audit_logs (
        id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
        organization_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
        actor_user_id uuid REFERENCES users(id) ON DELETE SET NULL,
        actor_email text,
        action text NOT NULL,
        resource_type text NOT NULL,
        resource_id text,
        metadata jsonb NOT NULL DEFAULT '{}',
        ip_address text,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await queryRunner.query(`CREATE INDEX audit_logs_org_created_idx ON audit_logs (organization_id, created_at DESC)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    for (const table of [
      'audit_logs',
      'cli_sessions',
      'api_keys',
      'invites',
      'auth_tokens',
      'sessions',
      'memberships',
      'users',
    ]) {
      await queryRunner.query(`DROP TABLE ${table}`);
    }
  }
}
