import { Injectable } from '@nestjs/common';
import { queryRows } from '../../database/sql.js';
import { UnitOfWork } from '../../database/unit-of-work.js';
import { trustOrganizationId, type OrganizationId } from '../../common/access/tenant-id.js';

/** A sign-in attempt between start and callback. */
export interface SsoAttempt {
  organizationId: OrganizationId;
  nonce: string;
  codeVerifier: string;
  cliSessionId: string | null;
  expired: boolean;
}

/** A provider's sign-in waiting for the account's owner to confirm the link with the password. */
export interface SsoPendingLink {
  userId: string;
  organizationId: OrganizationId;
  email: string;
  issuer: string;
  subject: string;
  cliSessionId: string | null;
}

/**
 * The owner of the SSO sign-in's tables (decision 0070): `sso_login_attempts` (start to callback,
 * single use), `sso_pending_links` (callback to the password that links) and `sso_account_links`
 * (which provider may sign which account in). Found by the hash of the secret the browser holds.
 */
@Injectable()
export class SsoSignInRepository {
  constructor(private readonly uow: UnitOfWork) {}

  /** Stores an attempt (dropping expired ones first). */
  async insertAttempt(stateHash: string, attempt: Omit<SsoAttempt, 'expired'>, ttlSeconds: number): Promise<void> {
    const manager = this.uow.manager();
    await manager.query(`DELETE FROM sso_login_attempts WHERE expires_at <= now()`);
    await manager.query(
      `INSERT INTO sso_login_attempts (state_hash, organization_id, nonce, code_verifier, cli_session_id, expires_at)
       VALUES ($1, $2, $3, $4, $5, now() + make_interval(secs => $6))`,
      [stateHash, attempt.organizationId, attempt.nonce, attempt.codeVerifier, attempt.cliSessionId, ttlSeconds],
    );
  }

  /** Deletes the attempt and answers it (expired or not): a state can be brought back once. */
  async takeAttempt(stateHash: string): Promise<SsoAttempt | null> {
    const [row] = await queryRows<{
      organization_id: string;
      nonce: string;
      code_verifier: string;
      cli_session_id: string | null;
      expired: boolean;
    }>(
      this.uow.manager(),
      `DELETE FROM sso_login_attempts WHERE state_hash = $1
       RETURNING organization_id, nonce, code_verifier, cli_session_id, expires_at <= now() AS expired`,
      [stateHash],
    );
    return row
      ? {
          organizationId: trustOrganizationId(row.organization_id),
          nonce: row.nonce,
          codeVerifier: row.code_verifier,
          cliSessionId: row.cli_session_id,
          expired: row.expired,
        }
      : null;
  }

  /** Stores a pending link (dropping expired ones first). */
  async insertPendingLink(tokenHash: string, link: SsoPendingLink, ttlSeconds: number): Promise<void> {
    const manager = this.uow.manager();
    await manager.query(`DELETE FROM sso_pending_links WHERE expires_at <= now()`);
    await manager.query(
      `INSERT INTO sso_pending_links (token_hash, user_id, organization_id, email, issuer, subject, cli_session_id, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, now() + make_interval(secs => $8))`,
      [
        tokenHash,
        link.userId,
        link.organizationId,
        link.email,
        link.issuer,
        link.subject,
        link.cliSessionId,
        ttlSeconds,
      ],
    );
  }

  /** The pending link while it has not expired. */
  async findPendingLink(tokenHash: string): Promise<SsoPendingLink | null> {
    const [row] = await queryRows<{
      user_id: string;
      organization_id: string;
      email: string;
      issuer: string;
      subject: string;
      cli_session_id: string | null;
    }>(
      this.uow.manager(),
      `SELECT user_id, organization_id, email, issuer, subject, cli_session_id FROM sso_pending_links
        WHERE token_hash = $1 AND expires_at > now()`,
      [tokenHash],
    );
    return row
      ? {
          userId: row.user_id,
          organizationId: trustOrganizationId(row.organization_id),
          email: row.email,
          issuer: row.issuer,
          subject: row.subject,
          cliSessionId: row.cli_session_id,
        }
      : null;
  }

  /** Deletes the pending link; whether it was still there (a link is confirmed once). */
  async deletePendingLink(tokenHash: string): Promise<boolean> {
    const rows = await queryRows<{ one: number }>(
      this.uow.manager(),
      `DELETE FROM sso_pending_links WHERE token_hash = $1 RETURNING 1 AS one`,
      [tokenHash],
    );
    return rows.length > 0;
  }

  /** Whether the organization's provider may sign the account in. */
  async isLinked(userId: string, organizationId: OrganizationId): Promise<boolean> {
    const rows = await queryRows<{ one: number }>(
      this.uow.manager(),
      `SELECT 1 AS one FROM sso_account_links WHERE user_id = $1 AND organization_id = $2`,
      [userId, organizationId],
    );
    return rows.length > 0;
  }

  /** Records (or renews) that the organization's provider may sign the account in. */
  async link(
    userId: string,
    organizationId: OrganizationId,
    issuer: string,
    subject: string,
    createdBy: 'provider' | 'account',
  ): Promise<void> {
    await this.uow.manager().query(
      `INSERT INTO sso_account_links (user_id, organization_id, issuer, subject, created_by)
       VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (user_id, organization_id) DO UPDATE
          SET issuer = EXCLUDED.issuer, subject = EXCLUDED.subject, created_by = EXCLUDED.created_by, created_at = now()`,
      [userId, organizationId, issuer, subject, createdBy],
    );
  }
}
