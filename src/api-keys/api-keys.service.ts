import { Inject, Injectable, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { ROLES, type ApiKeyScope, type Role } from '../common/access/access.decorator.js';
import type { OrgAuthContext } from '../common/access/auth-context.js';
import type { OrganizationId } from '../common/access/tenant-id.js';
import { forbidden, notFound } from '../common/errors/app-exception.js';
import { AuditService } from '../audit/audit.service.js';
import { PLAN_RULES, planAllows } from '../common/tiers.js';
import { createLogger } from '../common/logging/logger.js';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import type { PgListener } from '../database/pg-listener.js';
import { UnitOfWork } from '../database/unit-of-work.js';
import { OrganizationsService } from '../organizations/organizations.service.js';
import { PlanService } from '../organizations/plan.service.js';
import { UsersService } from '../users/users.service.js';
import type { ApiKey, ApiKeyType } from './api-key.entity.js';
import { generateApiKey, hashApiKey } from './api-key-secret.js';
import { ApiKeysRepository, type ApiKeyRecord } from './api-keys.repository.js';

export interface NewApiKey {
  name: string;
  scopes: ApiKeyScope[];
  type?: ApiKeyType;
  expiresAt?: Date | null;
}

function parseRevocation(payload: string): { keyId?: string; organizationId?: string; userId?: string } | null {
  try {
    const value: unknown = JSON.parse(payload);
    if (typeof value !== 'object' || value === null) return null;
    const { keyId, organizationId, userId } = value as Record<string, unknown>;
    const text = (field: unknown) => (typeof field === 'string' && field ? field : undefined);
    const parsed = { keyId: text(keyId), organizationId: text(organizationId), userId: text(userId) };
    return parsed.keyId || parsed.organizationId ? parsed : null;
  } catch {
    return null;
  }
}

export interface AuthenticatedKey {
  key: ApiKeyRecord;
  creatorEmail: string | null;
  /** The plan of the key's organization, for the limits of key-authenticated routes. */
  serviceTier: string;
}

/** Writes of `lastUsedAt` are spaced out so a busy key does not write on every request. */
const LAST_USED_RESOLUTION_MS = 60_000;
const REMEMBER_KEYS_MS = 10_000;
const MAX_REMEMBERED_KEYS = 10_000;

@Injectable()
export class ApiKeysService implements OnModuleInit, OnModuleDestroy {
  private readonly recent = new Map<string, { found: AuthenticatedKey; until: number }>();
  private readonly listener: PgListener;

  constructor(
    private readonly uow: UnitOfWork,
    private readonly keys: ApiKeysRepository,
    private readonly audit: AuditService,
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly plans: PlanService,
    private readonly organizations: OrganizationsService,
    private readonly users: UsersService,
  ) {
    this.listener = keys.revocationListener({
      logger: createLogger(config).child({ component: 'api-key-revocations' }),
      onMessage: (payload) => this.receive(payload),
      // Notifications may have been missed while away: nothing remembered is trusted any more.
      onReconnect: () => this.recent.clear(),
    });
  }

  async onModuleInit(): Promise<void> {
    await this.listener.start();
  }

  async onModuleDestroy(): Promise<void> {
    await this.listener.close();
  }

  list(auth: OrgAuthContext): Promise<ApiKey[]> {
    return this.keys.listActive(auth.organizationId);
  }

  async create(auth: OrgAuthContext, input: NewApiKey): Promise<{ key: string; record: ApiKeyRecord }> {
    return this.uow.run(async () => {
      const created = await this.issue(auth.organizationId, auth.caller.userId, input);
      await this.audit.record(auth, {
        organizationId: auth.organizationId,
        action: 'apikey.created',
        resourceType: 'api_key',
        resourceId: created.record.id,
        metadata: { name: input.name, prefix: created.record.prefix, scopes: input.scopes },
      });
      return created;
    });
  }

  /** Creates a key in the open unit of work (dashboard, CLI login, management CLI). */
  async issue(
    organizationId: OrganizationId,
    createdBy: string | null,
    input: NewApiKey,
  ): Promise<{ key: string; record: ApiKeyRecord }> {
    if (input.scopes.includes('admin:team')) await this.assertAdminTeamScopeAllowed(organizationId);
    const type = input.type ?? 'service';
    const { key, prefix, hash } = generateApiKey(type);
    const record = await this.keys.insert(organizationId, {
      createdBy,
      name: input.name,
      keyType: type,
      prefix,
      keyHash: hash,
      scopes: input.scopes,
      expiresAt: input.expiresAt ?? null,
    });
    return { key, record };
  }

  /** New secret for the same key record; the old secret stops working at once. */
  async rotate(auth: OrgAuthContext, id: string): Promise<{ key: string; record: ApiKey }> {
    return this.uow
      .run(async () => {
        const record = await this.findActive(auth.organizationId, id);
        const { key, prefix, hash } = generateApiKey(record.keyType);
        await this.keys.replaceSecret(auth.organizationId, id, prefix, hash);
        await this.keys.announceRevoked({ keyId: id });
        await this.audit.record(auth, {
          organizationId: auth.organizationId,
          action: 'apikey.rotated',
          resourceType: 'api_key',
          resourceId: id,
          metadata: { previousPrefix: record.prefix, prefix },
        });
        return { key, record: { ...record, prefix, lastUsedAt: null } };
      })
      .finally(() => this.forget(id));
  }

  async revoke(auth: OrgAuthContext, id: string): Promise<void> {
    await this.uow
      .run(async () => {
        const record = await this.findActive(auth.organizationId, id);
        await this.keys.revoke(auth.organizationId, id);
        await this.keys.announceRevoked({ keyId: id });
        await this.audit.record(auth, {
          organizationId: auth.organizationId,
          action: 'apikey.revoked',
          resourceType: 'api_key',
          resourceId: id,
          metadata: { prefix: record.prefix },
        });
      })
      .finally(() => this.forget(id));
  }

  /**
   * Revokes the personal (`gpat_`) keys a user holds in the organization, in the open unit of work
   * (a removed member's), and announces it to every instance when that commits.
   */
  async revokePersonalKeys(organizationId: OrganizationId, userId: string): Promise<void> {
    await this.keys.revokePersonal(organizationId, userId);
    await this.keys.announceRevoked({ organizationId, userId });
  }

  /** Tells every instance, when the open unit of work commits, that the organization's keys are gone. */
  async announceOrganizationRemoved(organizationId: OrganizationId): Promise<void> {
    await this.keys.announceRevoked({ organizationId });
  }

  /** Drops a key from the recent-keys memory of this instance. */
  forget(id: string): void {
    this.forgetWhere((key) => key.id === id);
  }

  /** Drops remembered keys matching `match` (a removed member's keys, a deleted organization's). */
  forgetWhere(match: (key: ApiKey) => boolean): void {
    for (const [hash, entry] of this.recent) if (match(entry.found.key)) this.recent.delete(hash);
  }

  /** A revocation committed on any instance, this one included: the keys it names are forgotten. */
  private receive(payload: string): void {
    const revoked = parseRevocation(payload);
    if (!revoked) return;
    this.forgetWhere(
      (key) =>
        key.id === revoked.keyId ||
        (key.organizationId === revoked.organizationId && (!revoked.userId || key.createdBy === revoked.userId)),
    );
  }

  /**
   * The live key a Bearer credential names, or null (unknown, revoked, expired, inactive org).
   * Found keys are remembered for ten seconds, so a busy integration does not cost a query per
   * request; a revocation, rotation, member removal or organization deletion commits a notification
   * (`announceApiKeysRevoked`) that makes every instance forget the keys it names at once.
   */
  async authenticate(token: string): Promise<AuthenticatedKey | null> {
    const hash = hashApiKey(token);
    const cached = this.recent.get(hash);
    if (
      cached &&
      cached.until > Date.now() &&
      (!cached.found.key.expiresAt || cached.found.key.expiresAt.getTime() > Date.now())
    ) {
      this.touch(cached.found.key);
      return cached.found;
    }
    this.recent.delete(hash);
    const found = await this.lookup(hash);
    if (found) {
      if (this.recent.size >= MAX_REMEMBERED_KEYS) this.recent.delete(this.recent.keys().next().value!);
      this.recent.set(hash, { found, until: Date.now() + REMEMBER_KEYS_MS });
    }
    return found;
  }

  /**
   * The current role, in the key's organization, of the user a personal key (`gpat_`) acts for:
   * read on every request, never cached, so a demotion, removal or deactivation applies to the
   * next request on every instance. Null: the user is gone, inactive or no longer a member.
   */
  async personalRole(key: ApiKeyRecord): Promise<Role | null> {
    if (!key.createdBy) return null;
    const user = await this.users.findById(key.createdBy);
    if (user?.status !== 'active') return null;
    if (user.isSuperAdmin) return 'owner';
    const role = await this.organizations.roleOf(key.organizationId, user.id);
    return (ROLES as readonly string[]).includes(role ?? '') ? role : null;
  }

  private async lookup(hash: string): Promise<AuthenticatedKey | null> {
    const key = await this.keys.findLiveByHash(hash);
    if (!key) return null;
    const organization = await this.organizations.find(key.organizationId);
    if (!organization?.isActive) return null;
    const creatorEmail = key.createdBy ? await this.users.addressOf(key.createdBy) : null;
    this.touch(key);
    return { key, creatorEmail, serviceTier: organization.serviceTier };
  }

  private touch(key: ApiKey): void {
    if (key.lastUsedAt && Date.now() - key.lastUsedAt.getTime() < LAST_USED_RESOLUTION_MS) return;
    key.lastUsedAt = new Date();
    void this.keys.touch(key.id).catch(() => undefined);
  }

  private async findActive(organizationId: OrganizationId, id: string): Promise<ApiKey> {
    const record = await this.keys.findActive(organizationId, id);
    if (!record) throw notFound('API key');
    return record;
  }

  private async assertAdminTeamScopeAllowed(organizationId: OrganizationId): Promise<void> {
    if (!planAllows((await this.plans.planOf(organizationId)).tier, 'adminTeamScope')) {
      throw forbidden(PLAN_RULES.adminTeamScope.refusal, {
        hint: 'Upgrade to Enterprise or choose other scopes',
      });
    }
  }
}
