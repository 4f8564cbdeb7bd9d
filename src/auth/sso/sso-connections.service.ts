import { Inject, Injectable } from '@nestjs/common';
import type { OrgAuthContext } from '../../common/access/auth-context.js';
import { badRequest, notFound } from '../../common/errors/app-exception.js';
import { tierDefinition } from '../../common/tiers.js';
import type { AppConfig } from '../../config/app-config.js';
import { APP_CONFIG } from '../../config/config.module.js';
import { AuditService } from '../../audit/audit.service.js';
import { UnitOfWork } from '../../database/unit-of-work.js';
import { randomSecret } from '../../common/crypto.js';
import { ProviderProblem, discoverProvider } from './oidc-client.js';
import { SsoSecrets } from './sso-secrets.js';
import type { PutSsoConnectionDto, SsoRole } from './sso.dto.js';
import { PlanService } from '../../organizations/plan.service.js';
import { OrganizationsService } from '../../organizations/organizations.service.js';
import type { OrganizationId } from '../../common/access/tenant-id.js';
import { SsoConnectionsRepository, type ConnectionRecord } from './sso-connections.repository.js';

export interface SsoConnection {
  readonly organizationId: OrganizationId;
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

/** The organization's OpenID Connect connection: Admin and up, Enterprise only. */
@Injectable()
export class SsoConnectionsService {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly connections: SsoConnectionsRepository,
    private readonly organizations: OrganizationsService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly secrets: SsoSecrets,
    private readonly audit: AuditService,
    private readonly plans: PlanService,
  ) {}

  /** Where providers send users back; registered at the provider as the client's redirect URI. */
  get redirectUri(): string {
    return `${this.config.baseUrl}/api/v1/auth/sso/callback`;
  }

  async get(auth: OrgAuthContext): Promise<SsoConnection> {
    await this.assertPlan(auth.organizationId);
    const connection = await this.connections.find(auth.organizationId);
    if (!connection) throw notFound('SSO connection');
    return toConnection(connection);
  }

  /**
   * Creates or replaces the connection. The issuer's discovery document is fetched and checked
   * first, outside the transaction (a slow provider must not hold the organization's lock).
   */
  async put(auth: OrgAuthContext, input: PutSsoConnectionDto): Promise<SsoConnection> {
    await this.assertPlan(auth.organizationId);
    const existing = await this.connections.find(auth.organizationId);
    let clientSecret = input.clientSecret;
    if (clientSecret === undefined) {
      if (!existing) {
        throw badRequest('clientSecret: is required when the connection is created', {
          hint: "Copy the client secret from the provider's application settings",
        });
      }
      clientSecret = (await this.secrets.open(existing.clientSecretSealed, auth.organizationId)) ?? undefined;
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
    return this.uow.run(async () => {
      await this.assertPlan(auth.organizationId, true);
      const connection = await this.connections.upsert(auth.organizationId, {
        issuer: input.issuer,
        clientId: input.clientId,
        clientSecretSealed: sealed,
        allowedDomains: input.allowedDomains,
        defaultRole: input.defaultRole,
        enforce: input.enforce,
        domainToken: randomSecret(24),
      });
      // Listed domains stay inert until proven (SsoDomainsService.verify); any organization may list one.
      await this.connections.replaceDomains(auth.organizationId, input.allowedDomains);
      await this.audit.record(auth, {
        organizationId: auth.organizationId,
        action: 'sso.updated',
        resourceType: 'sso_connection',
        resourceId: auth.organizationId,
        metadata: {
          created: existing === null,
          issuer: input.issuer,
          clientId: input.clientId,
          clientSecretChanged: input.clientSecret !== undefined,
          allowedDomains: input.allowedDomains,
          defaultRole: input.defaultRole,
          enforce: input.enforce,
        },
      });
      return toConnection(connection);
    });
  }

  async remove(auth: OrgAuthContext): Promise<void> {
    await this.assertPlan(auth.organizationId);
    await this.uow.run(async () => {
      const issuer = await this.connections.delete(auth.organizationId);
      if (issuer === null) throw notFound('SSO connection');
      await this.audit.record(auth, {
        organizationId: auth.organizationId,
        action: 'sso.deleted',
        resourceType: 'sso_connection',
        resourceId: auth.organizationId,
        metadata: { issuer },
      });
    });
  }

  /** The connection of an organization by slug or id, when it can sign users in right now. */
  async usable(by: { slug: string } | { organizationId: OrganizationId }): Promise<UsableSsoConnection | null> {
    const organization =
      'slug' in by ? await this.organizations.findBySlug(by.slug) : await this.organizations.find(by.organizationId);
    if (!organization || !tierDefinition(organization.serviceTier).features.sso) return null;
    const connection = await this.connections.findForSignIn(organization.id);
    if (!connection) return null;
    const clientSecret = await this.secrets.open(connection.clientSecretSealed, connection.organizationId);
    if (clientSecret === null) return null;
    return { ...toConnection(connection), clientSecret, organizationSlug: organization.slug };
  }

  /** The plan must have SSO; `lock` (inside a unit of work) holds the organization's row until it ends. */
  private async assertPlan(organizationId: OrganizationId, lock = false): Promise<void> {
    await this.plans.requireFeature(
      organizationId,
      'sso',
      {
        message: 'Single sign-on is available on the Enterprise plan',
        hint: 'Upgrade to Enterprise to connect an identity provider',
      },
      { lock },
    );
  }
}

function toConnection(record: ConnectionRecord): SsoConnection {
  return {
    organizationId: record.organizationId,
    issuer: record.issuer,
    clientId: record.clientId,
    allowedDomains: record.allowedDomains,
    defaultRole: record.defaultRole,
    enforce: record.enforce,
    createdAt: record.createdAt,
    updatedAt: record.updatedAt,
  };
}
