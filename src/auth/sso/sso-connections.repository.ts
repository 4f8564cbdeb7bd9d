import { Injectable } from '@nestjs/common';
import { trustOrganizationId, type OrganizationId } from '../../common/access/tenant-id.js';
import { queryRows } from '../../database/sql.js';
import { UnitOfWork } from '../../database/unit-of-work.js';
import type { SsoRole } from './sso.dto.js';

/** A row of `sso_connections` as its feature reads it. */
export interface ConnectionRecord {
  organizationId: OrganizationId;
  issuer: string;
  clientId: string;
  clientSecretSealed: string;
  allowedDomains: string[];
  defaultRole: SsoRole;
  enforce: boolean;
  createdAt: Date;
  updatedAt: Date;
}

/** What a connection is created or replaced with. */
export interface ConnectionWrite {
  issuer: string;
  clientId: string;
  clientSecretSealed: string;
  allowedDomains: readonly string[];
  defaultRole: SsoRole;
  enforce: boolean;
  /** The token of the connection's domain challenges; kept when the connection exists. */
  domainToken: string;
}

/** A listed domain of a connection, with the connection's challenge token. */
export interface DomainRecord {
  organizationId: OrganizationId;
  domain: string;
  verifiedAt: Date | null;
  checkedAt: Date | null;
  checkError: string | null;
  domainToken: string;
}

interface ConnectionRow {
  organization_id: string;
  issuer: string;
  client_id: string;
  client_secret_sealed: string;
  allowed_domains: string[];
  default_role: SsoRole;
  enforce: boolean;
  created_at: Date;
  updated_at: Date;
}

interface DomainRow {
  organization_id: string;
  domain: string;
  verified_at: Date | null;
  checked_at: Date | null;
  check_error: string | null;
  domain_token: string;
}

const COLUMNS = `c.organization_id, c.issuer, c.client_id, c.client_secret_sealed, c.allowed_domains, c.default_role,
                 c.enforce, c.created_at, c.updated_at`;

/**
 * The owner of `sso_connections` and `sso_domains` (decision 0070): an organization's OpenID
 * Connect connection and the domains it lists (with their proof of ownership). Tenant methods take
 * the organization's branded id; the sign-in's lookups (a public flow that names the organization
 * by slug or by a stored attempt) say so.
 */
@Injectable()
export class SsoConnectionsRepository {
  constructor(private readonly uow: UnitOfWork) {}

  async find(organizationId: OrganizationId): Promise<ConnectionRecord | null> {
    return this.connectionOf(organizationId);
  }

  /** The connection of the organization a sign-in names (no tenant caller: the flow is public). */
  async findForSignIn(organizationId: OrganizationId): Promise<ConnectionRecord | null> {
    return this.connectionOf(organizationId);
  }

  /** Creates or replaces the connection (the domain token of an existing one is kept). */
  async upsert(organizationId: OrganizationId, write: ConnectionWrite): Promise<ConnectionRecord> {
    const [row] = await queryRows<ConnectionRow>(
      this.uow.manager(),
      `INSERT INTO sso_connections AS c
              (organization_id, issuer, client_id, client_secret_sealed, allowed_domains, default_role, enforce,
               domain_token)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
       ON CONFLICT (organization_id) DO UPDATE
          SET issuer = EXCLUDED.issuer, client_id = EXCLUDED.client_id,
              client_secret_sealed = EXCLUDED.client_secret_sealed, allowed_domains = EXCLUDED.allowed_domains,
              default_role = EXCLUDED.default_role, enforce = EXCLUDED.enforce, updated_at = now()
       RETURNING ${COLUMNS}`,
      [
        organizationId,
        write.issuer,
        write.clientId,
        write.clientSecretSealed,
        write.allowedDomains,
        write.defaultRole,
        write.enforce,
        write.domainToken,
      ],
    );
    return toConnection(row);
  }

  /** Deletes the connection (its domains cascade); its issuer, or null when there was none. */
  async delete(organizationId: OrganizationId): Promise<string | null> {
    const [row] = await queryRows<{ issuer: string }>(
      this.uow.manager(),
      `DELETE FROM sso_connections WHERE organization_id = $1 RETURNING issuer`,
      [organizationId],
    );
    return row?.issuer ?? null;
  }

  /** Whether the connection enforces SSO; null without a connection. */
  async enforces(organizationId: OrganizationId): Promise<boolean | null> {
    const [row] = await queryRows<{ enforce: boolean }>(
      this.uow.manager(),
      `SELECT enforce FROM sso_connections WHERE organization_id = $1`,
      [organizationId],
    );
    return row ? row.enforce : null;
  }

  /** Those of the organizations whose connection enforces SSO. */
  async enforcingAmong(organizationIds: readonly string[]): Promise<Set<string>> {
    if (!organizationIds.length) return new Set();
    const rows = await queryRows<{ organization_id: string }>(
      this.uow.manager(),
      `SELECT organization_id FROM sso_connections WHERE enforce AND organization_id = ANY($1::uuid[])`,
      [organizationIds],
    );
    return new Set(rows.map((row) => row.organization_id));
  }

  /** Keeps the listed domains (and their verification), adds new ones unverified, drops the rest. */
  async replaceDomains(organizationId: OrganizationId, domains: readonly string[]): Promise<void> {
    await this.uow
      .manager()
      .query(`DELETE FROM sso_domains WHERE organization_id = $1 AND NOT (domain = ANY($2::text[]))`, [
        organizationId,
        domains,
      ]);
    await this.uow
      .manager()
      .query(`INSERT INTO sso_domains (organization_id, domain) SELECT $1, unnest($2::text[]) ON CONFLICT DO NOTHING`, [
        organizationId,
        domains,
      ]);
  }

  /** The connection's domains in the order listed; empty without a connection. */
  async domains(organizationId: OrganizationId): Promise<DomainRecord[]> {
    const rows = await queryRows<DomainRow>(
      this.uow.manager(),
      `SELECT d.organization_id, d.domain, d.verified_at, d.checked_at, d.check_error, c.domain_token
         FROM sso_connections c JOIN sso_domains d ON d.organization_id = c.organization_id
        WHERE c.organization_id = $1
        ORDER BY d.created_at, d.domain`,
      [organizationId],
    );
    return rows.map(toDomain);
  }

  /** Verified domains last checked before `checkedBefore` (never checked first), across organizations. */
  async verifiedDueForCheck(checkedBefore: Date, limit: number): Promise<DomainRecord[]> {
    const rows = await queryRows<DomainRow>(
      this.uow.manager(),
      `SELECT d.organization_id, d.domain, d.verified_at, d.checked_at, d.check_error, c.domain_token
         FROM sso_domains d JOIN sso_connections c ON c.organization_id = d.organization_id
        WHERE d.verified_at IS NOT NULL AND (d.checked_at IS NULL OR d.checked_at <= $1)
        ORDER BY d.checked_at NULLS FIRST LIMIT $2`,
      [checkedBefore, limit],
    );
    return rows.map(toDomain);
  }

  /**
   * The domain is verified (kept when it was) and checked now; undefined when it is not listed.
   * Another organization holding it verified is a unique violation, for the caller to answer.
   */
  async markDomainVerified(
    organizationId: OrganizationId,
    domain: string,
  ): Promise<{ verifiedAt: Date; checkedAt: Date } | undefined> {
    const [row] = await queryRows<{ verified_at: Date; checked_at: Date }>(
      this.uow.manager(),
      `UPDATE sso_domains SET verified_at = coalesce(verified_at, now()), checked_at = now(), check_error = NULL
        WHERE organization_id = $1 AND domain = $2
        RETURNING verified_at, checked_at`,
      [organizationId, domain],
    );
    return row ? { verifiedAt: new Date(row.verified_at), checkedAt: new Date(row.checked_at) } : undefined;
  }

  /** A check found the record: noted. */
  async markDomainChecked(organizationId: OrganizationId, domain: string): Promise<void> {
    await this.uow
      .manager()
      .query(
        `UPDATE sso_domains SET checked_at = now(), check_error = NULL WHERE organization_id = $1 AND domain = $2`,
        [organizationId, domain],
      );
  }

  /** A check did not find the record: noted, and `unverify` takes the verification away. */
  async markDomainCheckFailed(
    organizationId: OrganizationId,
    domain: string,
    error: string,
    unverify: boolean,
  ): Promise<{ verifiedAt: Date | null; checkedAt: Date | null; checkError: string | null } | undefined> {
    const [row] = await queryRows<{ verified_at: Date | null; checked_at: Date | null; check_error: string | null }>(
      this.uow.manager(),
      `UPDATE sso_domains SET checked_at = now(), check_error = $3,
              verified_at = CASE WHEN $4 THEN NULL ELSE verified_at END
        WHERE organization_id = $1 AND domain = $2
        RETURNING verified_at, checked_at, check_error`,
      [organizationId, domain, error, unverify],
    );
    return row
      ? {
          verifiedAt: row.verified_at ? new Date(row.verified_at) : null,
          checkedAt: row.checked_at ? new Date(row.checked_at) : null,
          checkError: row.check_error,
        }
      : undefined;
  }

  /** Whether the organization holds the domain verified (the sign-in's check). */
  async holdsVerified(organizationId: OrganizationId, domain: string): Promise<boolean> {
    const rows = await queryRows<{ one: number }>(
      this.uow.manager(),
      `SELECT 1 AS one FROM sso_domains WHERE organization_id = $1 AND domain = $2 AND verified_at IS NOT NULL`,
      [organizationId, domain],
    );
    return rows.length > 0;
  }

  /** The organization holding the domain verified, if any (discovery by e-mail address). */
  async verifiedHolderOf(domain: string): Promise<OrganizationId | null> {
    const [row] = await queryRows<{ organization_id: string }>(
      this.uow.manager(),
      `SELECT organization_id FROM sso_domains WHERE domain = $1 AND verified_at IS NOT NULL`,
      [domain],
    );
    return row ? trustOrganizationId(row.organization_id) : null;
  }

  private async connectionOf(organizationId: OrganizationId): Promise<ConnectionRecord | null> {
    const [row] = await queryRows<ConnectionRow>(
      this.uow.manager(),
      `SELECT ${COLUMNS} FROM sso_connections c WHERE c.organization_id = $1`,
      [organizationId],
    );
    return row ? toConnection(row) : null;
  }
}

function toConnection(row: ConnectionRow): ConnectionRecord {
  return {
    organizationId: trustOrganizationId(row.organization_id),
    issuer: row.issuer,
    clientId: row.client_id,
    clientSecretSealed: row.client_secret_sealed,
    allowedDomains: row.allowed_domains,
    defaultRole: row.default_role,
    enforce: row.enforce,
    createdAt: new Date(row.created_at),
    updatedAt: new Date(row.updated_at),
  };
}

function toDomain(row: DomainRow): DomainRecord {
  return {
    organizationId: trustOrganizationId(row.organization_id),
    domain: row.domain,
    verifiedAt: row.verified_at ? new Date(row.verified_at) : null,
    checkedAt: row.checked_at ? new Date(row.checked_at) : null,
    checkError: row.check_error,
    domainToken: row.domain_token,
  };
}
