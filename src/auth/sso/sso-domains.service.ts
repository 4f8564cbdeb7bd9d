import type { OrganizationId } from '../../common/access/tenant-id.js';
import { Injectable } from '@nestjs/common';
import type { OrgAuthContext } from '../../common/access/auth-context.js';
import { AppException, conflict, notFound } from '../../common/errors/app-exception.js';
import { tierDefinition } from '../../common/tiers.js';
import { AuditService } from '../../audit/audit.service.js';
import { UnitOfWork } from '../../database/unit-of-work.js';
import { SsoConnectionsRepository, type DomainRecord } from './sso-connections.repository.js';
import { isUniqueViolation } from '../../database/unique-violation.js';
import { PlanService } from '../../organizations/plan.service.js';
import { OrganizationsService } from '../../organizations/organizations.service.js';
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
    private readonly uow: UnitOfWork,
    private readonly connections: SsoConnectionsRepository,
    private readonly organizations: OrganizationsService,
    private readonly dns: DnsTxtLookup,
    private readonly audit: AuditService,
    private readonly plans: PlanService,
  ) {}

  async list(auth: OrgAuthContext): Promise<SsoDomain[]> {
    await this.assertPlan(auth.organizationId);
    const rows = await this.connections.domains(auth.organizationId);
    if (!rows.length) throw notFound('SSO connection');
    return rows.map(toDomain);
  }

  /**
   * Looks the organization's TXT record up now. Found: the domain is verified (409 when another
   * organization holds it). Not found: 422 naming the record; a domain that was verified loses it.
   */
  async verify(auth: OrgAuthContext, domain: string): Promise<SsoDomain> {
    await this.assertPlan(auth.organizationId);
    const listed = (await this.connections.domains(auth.organizationId)).find((row) => row.domain === domain);
    if (!listed) throw notFound('SSO domain');
    const verdict = challengeVerdict(await this.dns.lookup(challengeName(domain)), listed.domainToken);
    const row = await this.uow.run(async () => {
      if (verdict.kind === 'proven') return this.markVerified(auth, listed);
      return this.recordFailedCheck(listed, verdict, auth);
    });
    if (!row) throw notFound('SSO domain');
    if (verdict.kind !== 'proven') {
      throw new AppException(422, 'domain_not_verified', `${domain} is not verified: ${verdict.reason}`, {
        hint: `Publish a TXT record ${challengeName(domain)} with the value ${challengeValue(listed.domainToken)}, then verify again (DNS changes can take a while to appear)`,
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
    const due = await this.connections.verifiedDueForCheck(
      new Date(now.getTime() - RECHECK_AFTER_HOURS * 3_600_000),
      RECHECK_BATCH,
    );
    let lost = 0;
    for (const row of due) {
      const verdict = challengeVerdict(await this.dns.lookup(challengeName(row.domain)), row.domainToken);
      await this.uow.run(async () => {
        if (verdict.kind === 'proven') {
          await this.connections.markDomainChecked(row.organizationId, row.domain);
          return;
        }
        const updated = await this.recordFailedCheck(row, verdict, null);
        if (verdict.kind === 'missing' && updated && !updated.verifiedAt) lost++;
      });
    }
    return { checked: due.length, lost };
  }

  /** Whether the organization holds the domain verified (the provider's word counts for it). */
  isVerified(organizationId: OrganizationId, domain: string): Promise<boolean> {
    return this.connections.holdsVerified(organizationId, domain);
  }

  /** The slug of the organization holding the address's domain verified, while its plan has SSO. */
  async organizationSlugForEmail(email: string): Promise<string | null> {
    const domain = email.slice(email.lastIndexOf('@') + 1).toLowerCase();
    const holder = await this.connections.verifiedHolderOf(domain);
    const organization = holder ? await this.organizations.find(holder) : null;
    return organization && tierDefinition(organization.serviceTier).features.sso ? organization.slug : null;
  }

  private async markVerified(auth: OrgAuthContext, listed: DomainRecord): Promise<DomainRecord | undefined> {
    let marked: { verifiedAt: Date; checkedAt: Date } | undefined;
    try {
      marked = await this.connections.markDomainVerified(auth.organizationId, listed.domain);
    } catch (error) {
      if (isUniqueViolation(error)) {
        throw conflict(`${listed.domain} is verified by another organization`, {
          hint: 'A verified domain belongs to one organization. It becomes free once the other organization’s record is gone and its next check notices; contact support if the domain is yours',
        });
      }
      throw error;
    }
    if (!listed.verifiedAt) {
      await this.audit.record(auth, {
        organizationId: auth.organizationId,
        action: 'sso.domain_verified',
        resourceType: 'sso_domain',
        resourceId: listed.domain,
        metadata: { domain: listed.domain, record: challengeName(listed.domain) },
      });
    }
    return marked ? { ...listed, ...marked, checkError: null } : undefined;
  }

  /** Notes a check that did not find the record; a definite "missing" takes a verification away. */
  private async recordFailedCheck(
    row: DomainRecord,
    verdict: Exclude<ChallengeVerdict, { kind: 'proven' }>,
    auth: OrgAuthContext | null,
  ): Promise<DomainRecord | undefined> {
    const checked = await this.connections.markDomainCheckFailed(
      row.organizationId,
      row.domain,
      verdict.reason,
      verdict.kind === 'missing',
    );
    if (checked && row.verifiedAt && !checked.verifiedAt) {
      await this.audit.record(auth, {
        organizationId: row.organizationId,
        action: 'sso.domain_unverified',
        resourceType: 'sso_domain',
        resourceId: row.domain,
        metadata: { domain: row.domain, reason: verdict.reason },
      });
    }
    return checked ? { ...row, ...checked } : undefined;
  }

  private async assertPlan(organizationId: OrganizationId): Promise<void> {
    await this.plans.requireFeature(organizationId, 'sso', {
      message: 'Single sign-on is available on the Enterprise plan',
      hint: 'Upgrade to Enterprise to connect an identity provider',
    });
  }
}

function toDomain(row: DomainRecord): SsoDomain {
  return {
    domain: row.domain,
    verifiedAt: row.verifiedAt,
    checkedAt: row.checkedAt,
    checkError: row.checkError,
    record: { name: challengeName(row.domain), value: challengeValue(row.domainToken) },
  };
}
