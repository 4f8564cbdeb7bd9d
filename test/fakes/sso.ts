/* eslint-disable @typescript-eslint/require-await -- in-memory fakes answer at once, behind the repositories' promise signatures */
import type { OrganizationId } from '../../src/common/access/tenant-id.js';
import type {
  ConnectionRecord,
  ConnectionWrite,
  DomainRecord,
  SsoConnectionsRepository,
} from '../../src/auth/sso/sso-connections.repository.js';
import type { SsoAttempt, SsoPendingLink, SsoSignInRepository } from '../../src/auth/sso/sso-sign-in.repository.js';
import type { Public } from './users.js';

/** In-memory `sso_connections` and `sso_domains` (a verified domain belongs to one organization). */
export class FakeSsoConnectionsRepository implements Public<SsoConnectionsRepository> {
  readonly connections = new Map<string, ConnectionRecord & { domainToken: string }>();
  readonly domainRows: DomainRecord[] = [];

  async find(organizationId: OrganizationId): Promise<ConnectionRecord | null> {
    return this.connections.get(organizationId) ?? null;
  }

  async findForSignIn(organizationId: OrganizationId): Promise<ConnectionRecord | null> {
    return this.connections.get(organizationId) ?? null;
  }

  async upsert(organizationId: OrganizationId, write: ConnectionWrite): Promise<ConnectionRecord> {
    const existing = this.connections.get(organizationId);
    const record = {
      organizationId,
      issuer: write.issuer,
      clientId: write.clientId,
      clientSecretSealed: write.clientSecretSealed,
      allowedDomains: [...write.allowedDomains],
      defaultRole: write.defaultRole,
      enforce: write.enforce,
      createdAt: existing?.createdAt ?? new Date(),
      updatedAt: new Date(),
      domainToken: existing?.domainToken ?? write.domainToken,
    };
    this.connections.set(organizationId, record);
    return record;
  }

  async delete(organizationId: OrganizationId): Promise<string | null> {
    const existing = this.connections.get(organizationId);
    if (!existing) return null;
    this.connections.delete(organizationId);
    this.removeDomains((row) => row.organizationId === organizationId);
    return existing.issuer;
  }

  async enforces(organizationId: string): Promise<boolean | null> {
    return this.connections.get(organizationId)?.enforce ?? null;
  }

  async enforcingAmong(organizationIds: readonly string[]): Promise<Set<string>> {
    return new Set(organizationIds.filter((id) => this.connections.get(id)?.enforce === true));
  }

  async replaceDomains(organizationId: OrganizationId, domains: readonly string[]): Promise<void> {
    this.removeDomains((row) => row.organizationId === organizationId && !domains.includes(row.domain));
    const token = this.connections.get(organizationId)?.domainToken ?? '';
    for (const domain of domains) {
      if (this.domainRows.some((row) => row.organizationId === organizationId && row.domain === domain)) continue;
      this.domainRows.push({
        organizationId,
        domain,
        verifiedAt: null,
        checkedAt: null,
        checkError: null,
        domainToken: token,
      });
    }
  }

  async domains(organizationId: OrganizationId): Promise<DomainRecord[]> {
    return this.domainRows.filter((row) => row.organizationId === organizationId).map((row) => ({ ...row }));
  }

  async verifiedDueForCheck(checkedBefore: Date, limit: number): Promise<DomainRecord[]> {
    return this.domainRows
      .filter((row) => row.verifiedAt && (!row.checkedAt || row.checkedAt <= checkedBefore))
      .slice(0, limit)
      .map((row) => ({ ...row }));
  }

  async markDomainVerified(organizationId: OrganizationId, domain: string) {
    const row = this.row(organizationId, domain);
    if (!row) return undefined;
    if (
      this.domainRows.some(
        (other) => other.domain === domain && other.verifiedAt && other.organizationId !== organizationId,
      )
    ) {
      throw Object.assign(new Error('duplicate key value violates unique constraint'), { code: '23505' });
    }
    row.verifiedAt ??= new Date();
    row.checkedAt = new Date();
    row.checkError = null;
    return { verifiedAt: row.verifiedAt, checkedAt: row.checkedAt };
  }

  async markDomainChecked(organizationId: OrganizationId, domain: string): Promise<void> {
    const row = this.row(organizationId, domain);
    if (row) Object.assign(row, { checkedAt: new Date(), checkError: null });
  }

  async markDomainCheckFailed(organizationId: OrganizationId, domain: string, error: string, unverify: boolean) {
    const row = this.row(organizationId, domain);
    if (!row) return undefined;
    Object.assign(row, { checkedAt: new Date(), checkError: error, verifiedAt: unverify ? null : row.verifiedAt });
    return { verifiedAt: row.verifiedAt, checkedAt: row.checkedAt, checkError: row.checkError };
  }

  async holdsVerified(organizationId: OrganizationId, domain: string): Promise<boolean> {
    return this.domainRows.some(
      (row) => row.organizationId === organizationId && row.domain === domain && row.verifiedAt,
    );
  }

  async verifiedHolderOf(domain: string): Promise<OrganizationId | null> {
    return this.domainRows.find((row) => row.domain === domain && row.verifiedAt)?.organizationId ?? null;
  }

  private row(organizationId: string, domain: string): DomainRecord | undefined {
    return this.domainRows.find((row) => row.organizationId === organizationId && row.domain === domain);
  }

  private removeDomains(predicate: (row: DomainRecord) => boolean): void {
    for (let i = this.domainRows.length - 1; i >= 0; i--)
      if (predicate(this.domainRows[i])) this.domainRows.splice(i, 1);
  }
}

/**
 * In-memory `sso_login_attempts`, `sso_pending_links` and `sso_account_links`: attempts are taken
 * once (expired or not), pending links are found while unexpired and deleted once.
 */
export class FakeSsoSignInRepository implements Public<SsoSignInRepository> {
  readonly attempts = new Map<string, Omit<SsoAttempt, 'expired'> & { expiresAt: number }>();
  readonly pendingLinks = new Map<string, SsoPendingLink & { expiresAt: number }>();
  readonly links: { userId: string; organizationId: string; issuer: string; subject: string; createdBy: string }[] = [];

  async insertAttempt(stateHash: string, attempt: Omit<SsoAttempt, 'expired'>, ttlSeconds: number): Promise<void> {
    this.attempts.set(stateHash, { ...attempt, expiresAt: Date.now() + ttlSeconds * 1000 });
  }

  async takeAttempt(stateHash: string): Promise<SsoAttempt | null> {
    const row = this.attempts.get(stateHash);
    if (!row) return null;
    this.attempts.delete(stateHash);
    const { expiresAt, ...attempt } = row;
    return { ...attempt, expired: expiresAt <= Date.now() };
  }

  async insertPendingLink(tokenHash: string, link: SsoPendingLink, ttlSeconds: number): Promise<void> {
    this.pendingLinks.set(tokenHash, { ...link, expiresAt: Date.now() + ttlSeconds * 1000 });
  }

  async findPendingLink(tokenHash: string): Promise<SsoPendingLink | null> {
    const row = this.pendingLinks.get(tokenHash);
    if (!row || row.expiresAt <= Date.now()) return null;
    const { expiresAt: _expiresAt, ...link } = row;
    return link;
  }

  async deletePendingLink(tokenHash: string): Promise<boolean> {
    return this.pendingLinks.delete(tokenHash);
  }

  async isLinked(userId: string, organizationId: OrganizationId): Promise<boolean> {
    return this.links.some((link) => link.userId === userId && link.organizationId === organizationId);
  }

  async link(
    userId: string,
    organizationId: OrganizationId,
    issuer: string,
    subject: string,
    createdBy: 'provider' | 'account',
  ): Promise<void> {
    const existing = this.links.findIndex((link) => link.userId === userId && link.organizationId === organizationId);
    if (existing >= 0) this.links.splice(existing, 1);
    this.links.push({ userId, organizationId, issuer, subject, createdBy });
  }

  /** Moves every attempt's and pending link's expiry by `ms` into the past. */
  age(ms: number): void {
    for (const row of [...this.attempts.values(), ...this.pendingLinks.values()]) row.expiresAt -= ms;
  }
}
