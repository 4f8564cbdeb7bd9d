import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';
import type { OrgAuthContext } from '../../common/access/auth-context.js';
import { badRequest, notFound } from '../../common/errors/app-exception.js';
import { tierDefinition } from '../../common/tiers.js';
import type { AppConfig } from '../../config/app-config.js';
import { APP_CONFIG } from '../../config/config.module.js';
import { AuditService } from '../../audit/audit.service.js';
import { queryRows } from '../../database/sql.js';
import { randomSecret } from '../../common/crypto.js';
import { ProviderProblem, discoverProvider } from './oidc-client.js';
import { SsoDomainsService } from './sso-domains.service.js';
import { SsoSecrets } from './sso-secrets.js';
import type { PutSsoConnectionDto, SsoRole } from './sso.dto.js';
import { PlanService } from '../../organizations/plan.service.js';
import { organizationJoin } from '../../organizations/organizations.service.js';

export interface SsoConnection {
  readonly organizationId: string;
  readonly issuer: string;
  readonly clientId: string;
  readonly allowedDomains: readonly string[];
  readonly defaultRole: SsoRole;
  readonly enforce: boolean;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

/** A connection ready for sign-in: its organization is on a plan with SSO, the secret opened. */
export interface UsableSsoConnection extends SsoConnection {
  readonly clientSecret: string;
  readonly organizationSlug: string;
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

const COLUMNS = `c.organization_id, c.issuer, c.client_id, c.client_secret_sealed, c.allowed_domains, c.default_role,
                 c.enforce, c.created_at, c.updated_at`;

/** The organization's OpenID Connect connection: Admin and up, Enterprise only. */
@Injectable()
export class SsoConnectionsService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly secrets: SsoSecrets,
    private readonly audit: AuditService,
    private readonly plans: PlanService,
    private readonly domains: SsoDomainsService,
  ) {}

  /** Where providers send users back; registered at the provider as the client's redirect URI. */
  get redirectUri(): string {
    return `${this.config.baseUrl}/api/v1/auth/sso/callback`;
  }

  async get(auth: OrgAuthContext): Promise<SsoConnection> {
    await this.assertPlan(this.dataSource.manager, auth.organizationId);
    const rows: ConnectionRow[] = await this.dataSource.query(
      `SELECT ${COLUMNS} FROM sso_connections c WHERE c.organization_id = $1`,
      [auth.organizationId],
    );
    if (!rows.length) throw notFound('SSO connection');
    return toConnection(rows[0]);
  }

  /**
   * Creates or replaces the connection. The issuer's discovery document is fetched and checked
   * first, outside the transaction (a slow provider must not hold the organization's lock).
   */
  async put(auth: OrgAuthContext, input: PutSsoConnectionDto): Promise<SsoConnection> {
    await this.assertPlan(this.dataSource.manager, auth.organizationId);
    const existing: { client_secret_sealed: string; client_id: string; issuer: string }[] = await this.dataSource.query(
      `SELECT client_secret_sealed, client_id, issuer FROM sso_connections WHERE organization_id = $1`,
      [auth.organizationId],
    );
    let clientSecret = input.clientSecret;
    if (clientSecret === undefined) {
      if (!existing.length) {
        throw badRequest('clientSecret: is required when the connection is created', {
          hint: "Copy the client secret from the provider's application settings",
        });
      }
      clientSecret = (await this.secrets.open(existing[0].client_secret_sealed, auth.organizationId)) ?? undefined;
      if (clientSecret === undefined) {
        throw badRequest('clientSecret: the stored secret cannot be read with the current SSO_SECRET_KEY', {
          hint: 'Send the client secret again',
        });
      }
    }
    try {
      await discoverProvider(
        { issuer: input.issuer, clientId: input.clientId, clientSecret },
        this.config.webhookAllowPrivateNetworks,
      );
    } catch (error) {
      if (error instanceof ProviderProblem) {
        throw badRequest(`issuer: ${error.message}`, {
          hint: "Use the provider's issuer URL exactly as its /.well-known/openid-configuration states it",
        });
      }
      throw error;
    }
    const sealed = await this.secrets.seal(clientSecret, auth.organizationId);
    return this.dataSource.transaction(async (manager) => {
      await this.assertPlan(manager, auth.organizationId, true);
      const [row]: ConnectionRow[] = await manager.query(
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
          auth.organizationId,
          input.issuer,
          input.clientId,
          sealed,
          input.allowedDomains,
          input.defaultRole,
          input.enforce,
          randomSecret(24),
        ],
      );
      // Listed domains stay inert until proven (SsoDomainsService.verify); any organization may list one.
      await this.domains.replaceListed(manager, auth.organizationId, input.allowedDomains);
      await this.audit.record(
        auth,
        {
          organizationId: auth.organizationId,
          action: 'sso.updated',
          resourceType: 'sso_connection',
          resourceId: auth.organizationId,
          metadata: {
            created: existing.length === 0,
            issuer: input.issuer,
            clientId: input.clientId,
            clientSecretChanged: input.clientSecret !== undefined,
            allowedDomains: input.allowedDomains,
            defaultRole: input.defaultRole,
            enforce: input.enforce,
          },
        },
        manager,
      );
      return toConnection(row);
    });
  }

  async remove(auth: OrgAuthContext): Promise<void> {
    await this.assertPlan(this.dataSource.manager, auth.organizationId);
    await this.dataSource.transaction(async (manager) => {
      const deleted = await queryRows<{ issuer: string }>(
        manager,
        `DELETE FROM sso_connections WHERE organization_id = $1 RETURNING issuer`,
        [auth.organizationId],
      );
      if (!deleted.length) throw notFound('SSO connection');
      await this.audit.record(
        auth,
        {
          organizationId: auth.organizationId,
          action: 'sso.deleted',
          resourceType: 'sso_connection',
          resourceId: auth.organizationId,
          metadata: { issuer: deleted[0].issuer },
        },
        manager,
      );
    });
  }

  /** The connection of an organization by slug or id, when it can sign users in right now. */
  async usable(by: { slug: string } | { organizationId: string }): Promise<UsableSsoConnection | null> {
    const rows: (ConnectionRow & { slug: string; service_tier: string })[] = await this.dataSource.query(
      `SELECT ${COLUMNS}, o.slug, o.tier AS service_tier
         FROM sso_connections c ${organizationJoin('o', 'c.organization_id')}
        WHERE ${'slug' in by ? 'o.slug = $1' : 'o.id = $1'}`,
      ['slug' in by ? by.slug : by.organizationId],
    );
    const row = rows[0];
    if (!row || !tierDefinition(row.service_tier).features.sso) return null;
    const clientSecret = await this.secrets.open(row.client_secret_sealed, row.organization_id);
    if (clientSecret === null) return null;
    return { ...toConnection(row), clientSecret, organizationSlug: row.slug };
  }

  private async assertPlan(manager: EntityManager, organizationId: string, lock = false): Promise<void> {
    await this.plans.requireFeature(
      organizationId,
      'sso',
      {
        message: 'Single sign-on is available on the Enterprise plan',
        hint: 'Upgrade to Enterprise to connect an identity provider',
      },
      { manager, lock },
    );
  }
}

function toConnection(row: ConnectionRow): SsoConnection {
  return {
    organizationId: row.organization_id,
    issuer: row.issuer,
    clientId: row.client_id,
    allowedDomains: row.allowed_domains,
    defaultRole: row.default_role,
    enforce: row.enforce,
    createdAt: new Date(row.created_at),
    updatedAt: new Date(row.updated_at),
  };
}
