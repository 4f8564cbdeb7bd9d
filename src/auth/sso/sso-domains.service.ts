import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';
import type { OrgAuthContext } from '../../common/access/auth-context.js';
import { AppException, conflict, notFound } from '../../common/errors/app-exception.js';
import { tierDefinition } from '../../common/tiers.js';
import { AuditService } from '../../audit/audit.service.js';
import { queryRows } from '../../database/sql.js';
import { isUniqueViolation } from '../../database/unique-violation.js';
import { PlanService } from '../../organizations/plan.service.js';
import { organizationJoin } from '../../organizations/organizations.service.js';
import { challengeName, challengeValue, challengeVerdict, type ChallengeVerdict } from './domain-challenge.js';
import { DnsTxtLookup } from './dns-txt-lookup.js';

export interface SsoDomain {
  readonly domain: string;
  readonly verifiedAt: Date | null;
  readonly checkedAt: Date | null;
  readonly checkError: string | null;
  /** The TXT record that proves the domain. */
  readonly record: { readonly name: string; readonly value: string };
}

interface DomainRow {
  organization_id: string;
  domain: string;
  verified_at: Date | null;
  checked_at: Date | null;
  check_error: string | null;
  domain_token: string;
}

/** Verified domains are checked again after this long; the job runs hourly. */
export const RECHECK_AFTER_HOURS = 24;
const RECHECK_BATCH = 200;

/**
 * The SSO domains of a connection and their proof of ownership. A domain is stored as listed, but
 * it routes discovery and lets the provider's word count (sign-in, joining) only once the
 * organization's TXT record was found: `isVerified` and `organizationSlugForEmail` read only
 * verified rows. A verified domain belongs to one organization (a partial unique index decides).
 */
@Injectable()
export class SsoDomainsService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly dns: DnsTxtLookup,
    private readonly audit: AuditService,
    private readonly plans: PlanService,
  ) {}

  /** Keeps the listed domains (and their verification), adds new ones unverified, drops the rest. */
  async replaceListed(manager: EntityManager, organizationId: string, domains: readonly string[]): Promise<void> {
    await manager.query(`DELETE FROM sso_domains WHERE organization_id = $1 AND NOT (domain = ANY($2::text[]))`, [
      organizationId,
      domains,
    ]);
    await manager.query(
      `INSERT INTO sso_domains (organization_id, domain) SELECT $1, unnest($2::text[]) ON CONFLICT DO NOTHING`,
      [organizationId, domains],
    );
  }

  async list(auth: OrgAuthContext): Promise<SsoDomain[]> {
    await this.assertPlan(auth.organizationId);
    const rows = await this.rows(this.dataSource.manager, auth.organizationId);
    if (!rows.length) throw notFound('SSO connection');
    return rows.map(toDomain);
  }

  /**
   * Looks the organization's TXT record up now. Found: the domain is verified (409 when another
   * organization holds it). Not found: 422 naming the record; a domain that was verified loses it.
   */
  async verify(auth: OrgAuthContext, domain: string): Promise<SsoDomain> {
    await this.assertPlan(auth.organizationId);
    const listed = (await this.rows(this.dataSource.manager, auth.organizationId)).find((row) => row.domain === domain);
    if (!listed) throw notFound('SSO domain');
    const verdict = challengeVerdict(await this.dns.lookup(challengeName(domain)), listed.domain_token);
    const row = await this.dataSource.transaction(async (manager) => {
      if (verdict.kind === 'proven') return this.markVerified(manager, auth, listed);
      return this.recordFailedCheck(manager, listed, verdict, auth);
    });
    if (!row) throw notFound('SSO domain');
    if (verdict.kind !== 'proven') {
      throw new AppException(422, 'domain_not_verified', `${domain} is not verified: ${verdict.reason}`, {
        hint: `Publish a TXT record ${challengeName(domain)} with the value ${challengeValue(listed.domain_token)}, then verify again (DNS changes can take a while to appear)`,
      });
    }
    return toDomain(row);
  }

  /**
   * Checks verified domains whose last check is older than a day: a record that is gone makes the
   * domain inert again (`sso.domain_unverified` in the audit log); no answer keeps it as it is and
   * notes the error. Returns how many domains lost their verification.
   */
  async recheckDue(now: Date = new Date()): Promise<{ checked: number; lost: number }> {
    const due = await queryRows<DomainRow>(
      this.dataSource,
      `SELECT d.organization_id, d.domain, d.verified_at, d.checked_at, d.check_error, c.domain_token
         FROM sso_domains d JOIN sso_connections c ON c.organization_id = d.organization_id
        WHERE d.verified_at IS NOT NULL AND (d.checked_at IS NULL OR d.checked_at <= $1)
        ORDER BY d.checked_at NULLS FIRST LIMIT ${RECHECK_BATCH}`,
      [new Date(now.getTime() - RECHECK_AFTER_HOURS * 3_600_000)],
    );
    let lost = 0;
    for (const row of due) {
      const verdict = challengeVerdict(await this.dns.lookup(challengeName(row.domain)), row.domain_token);
      await this.dataSource.transaction(async (manager) => {
        if (verdict.kind === 'proven') {
          await manager.query(
            `UPDATE sso_domains SET checked_at = now(), check_error = NULL WHERE organization_id = $1 AND domain = $2`,
            [row.organization_id, row.domain],
          );
          return;
        }
        const updated = await this.recordFailedCheck(manager, row, verdict, null);
        if (verdict.kind === 'missing' && updated && !updated.verified_at) lost++;
      });
    }
    return { checked: due.length, lost };
  }

  /** Whether the organization holds the domain verified (the provider's word counts for it). */
  async isVerified(organizationId: string, domain: string, manager: EntityManager): Promise<boolean> {
    const rows = await queryRows<{ one: number }>(
      manager,
      `SELECT 1 AS one FROM sso_domains WHERE organization_id = $1 AND domain = $2 AND verified_at IS NOT NULL`,
      [organizationId, domain],
    );
    return rows.length > 0;
  }

  /** The slug of the organization holding the address's domain verified, while its plan has SSO. */
  async organizationSlugForEmail(email: string): Promise<string | null> {
    const domain = email.slice(email.lastIndexOf('@') + 1).toLowerCase();
    const rows = await queryRows<{ slug: string; service_tier: string }>(
      this.dataSource,
      `SELECT o.slug, o.tier AS service_tier FROM sso_domains d ${organizationJoin('o', 'd.organization_id')}
        WHERE d.domain = $1 AND d.verified_at IS NOT NULL`,
      [domain],
    );
    const row = rows[0];
    return row && tierDefinition(row.service_tier).features.sso ? row.slug : null;
  }

  private async markVerified(manager: EntityManager, auth: OrgAuthContext, listed: DomainRow): Promise<DomainRow> {
    let rows: DomainRow[];
    try {
      rows = await queryRows<DomainRow>(
        manager,
        `UPDATE sso_domains SET verified_at = coalesce(verified_at, now()), checked_at = now(), check_error = NULL
          WHERE organization_id = $1 AND domain = $2
          RETURNING organization_id, domain, verified_at, checked_at, check_error, $3::text AS domain_token`,
        [auth.organizationId, listed.domain, listed.domain_token],
      );
    } catch (error) {
      if (isUniqueViolation(error)) {
        throw conflict(`${listed.domain} is verified by another organization`, {
          hint: 'A verified domain belongs to one organization. It becomes free once the other organization’s record is gone and its next check notices; contact support if the domain is yours',
        });
      }
      throw error;
    }
    if (!listed.verified_at) {
      await this.audit.record(
        auth,
        {
          organizationId: auth.organizationId,
          action: 'sso.domain_verified',
          resourceType: 'sso_domain',
          resourceId: listed.domain,
          metadata: { domain: listed.domain, record: challengeName(listed.domain) },
        },
        manager,
      );
    }
    return rows[0];
  }

  /** Notes a check that did not find the record; a definite "missing" takes a verification away. */
  private async recordFailedCheck(
    manager: EntityManager,
    row: DomainRow,
    verdict: Exclude<ChallengeVerdict, { kind: 'proven' }>,
    auth: OrgAuthContext | null,
  ): Promise<DomainRow | undefined> {
    const [updated] = await queryRows<DomainRow>(
      manager,
      `UPDATE sso_domains SET checked_at = now(), check_error = $3,
              verified_at = CASE WHEN $4 THEN NULL ELSE verified_at END
        WHERE organization_id = $1 AND domain = $2
        RETURNING organization_id, domain, verified_at, checked_at, check_error, $5::text AS domain_token`,
      [row.organization_id, row.domain, verdict.reason, verdict.kind === 'missing', row.domain_token],
    );
    if (updated && row.verified_at && !updated.verified_at) {
      await this.audit.record(
        auth,
        {
          organizationId: row.organization_id,
          action: 'sso.domain_unverified',
          resourceType: 'sso_domain',
          resourceId: row.domain,
          metadata: { domain: row.domain, reason: verdict.reason },
        },
        manager,
      );
    }
    return updated;
  }

  private async rows(manager: EntityManager, organizationId: string): Promise<DomainRow[]> {
    return queryRows<DomainRow>(
      manager,
      `SELECT d.organization_id, d.domain, d.verified_at, d.checked_at, d.check_error, c.domain_token
         FROM sso_connections c JOIN sso_domains d ON d.organization_id = c.organization_id
        WHERE c.organization_id = $1
        ORDER BY d.created_at, d.domain`,
      [organizationId],
    );
  }

  private async assertPlan(organizationId: string): Promise<void> {
    await this.plans.requireFeature(organizationId, 'sso', {
      message: 'Single sign-on is available on the Enterprise plan',
      hint: 'Upgrade to Enterprise to connect an identity provider',
    });
  }
}

function toDomain(row: DomainRow): SsoDomain {
  return {
    domain: row.domain,
    verifiedAt: row.verified_at ? new Date(row.verified_at) : null,
    checkedAt: row.checked_at ? new Date(row.checked_at) : null,
    checkError: row.check_error,
    record: { name: challengeName(row.domain), value: challengeValue(row.domain_token) },
  };
}
