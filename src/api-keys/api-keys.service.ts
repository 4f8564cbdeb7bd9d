import { Inject, Injectable, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, IsNull, type EntityManager } from 'typeorm';
import { ROLES, type ApiKeyScope, type Role } from '../common/access/access.decorator.js';
import type { OrgAuthContext } from '../common/access/auth-context.js';
import { forbidden, notFound } from '../common/errors/app-exception.js';
import { AuditService } from '../audit/audit.service.js';
import { PLAN_RULES, planAllows } from '../common/tiers.js';
import { createLogger } from '../common/logging/logger.js';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { PgListener } from '../database/pg-listener.js';
import { PlanService } from '../organizations/plan.service.js';
import { ApiKey, type ApiKeyType } from './api-key.entity.js';
import { generateApiKey, hashApiKey } from './api-key-secret.js';
import { membershipJoin, organizationJoin } from '../organizations/organizations.service.js';
import { usersFrom } from '../users/users.service.js';

export interface NewApiKey {
  name: string;
  scopes: ApiKeyScope[];
  type?: ApiKeyType;
  expiresAt?: Date | null;
}

/** The channel on which committed key revocations reach every instance's memory of recent keys. */
export const API_KEY_REVOCATIONS_CHANNEL = 'api_key_revocations';

/** What stops remembered keys: one key, an organization's keys, or one member's keys in it. */
export type ApiKeyRevocation = { keyId: string } | { organizationId: string; userId?: string };

/**
 * Tells every instance, when the caller's transaction commits, to forget the keys a revocation
 * names (a revoked or rotated key, a removed member's personal keys, a deleted organization's).
 */
export async function announceApiKeysRevoked(manager: EntityManager, revocation: ApiKeyRevocation): Promise<void> {
  await manager.query(`SELECT pg_notify($1, $2)`, [API_KEY_REVOCATIONS_CHANNEL, JSON.stringify(revocation)]);
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
  key: ApiKey;
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
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly audit: AuditService,
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly plans: PlanService,
  ) {
    this.listener = new PgListener({
      url: (dataSource.options as { url?: string }).url,
      channel: API_KEY_REVOCATIONS_CHANNEL,
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
    return this.dataSource.getRepository(ApiKey).find({
      where: { organizationId: auth.organizationId, revokedAt: IsNull() },
      order: { createdAt: 'DESC' },
    });
  }

  async create(auth: OrgAuthContext, input: NewApiKey): Promise<{ key: string; record: ApiKey }> {
    return this.dataSource.transaction(async (manager) => {
      const created = await this.issue(manager, auth.organizationId, auth.caller.userId, input);
      await this.audit.record(
        auth,
        {
          organizationId: auth.organizationId,
          action: 'apikey.created',
          resourceType: 'api_key',
          resourceId: created.record.id,
          metadata: { name: input.name, prefix: created.record.prefix, scopes: input.scopes },
        },
        manager,
      );
      return created;
    });
  }

  /** Creates a key inside the caller's transaction (dashboard, CLI login, management CLI). */
  async issue(
    manager: EntityManager,
    organizationId: string,
    createdBy: string | null,
    input: NewApiKey,
  ): Promise<{ key: string; record: ApiKey }> {
    if (input.scopes.includes('admin:team')) await this.assertAdminTeamScopeAllowed(manager, organizationId);
    const type = input.type ?? 'service';
    const { key, prefix, hash } = generateApiKey(type);
    const record = manager.create(ApiKey, {
      organizationId,
      createdBy,
      name: input.name,
      keyType: type,
      prefix,
      keyHash: hash,
      scopes: input.scopes,
      expiresAt: input.expiresAt ?? null,
      lastUsedAt: null,
      revokedAt: null,
    });
    await manager.save(record);
    return { key, record };
  }

  /** New secret for the same key record; the old secret stops working at once. */
  async rotate(auth: OrgAuthContext, id: string): Promise<{ key: string; record: ApiKey }> {
    return this.dataSource
      .transaction(async (manager) => {
        const record = await this.findActive(manager, auth.organizationId, id);
        const { key, prefix, hash } = generateApiKey(record.keyType);
        await manager.update(ApiKey, { id }, { prefix, keyHash: hash, lastUsedAt: null });
        await announceApiKeysRevoked(manager, { keyId: id });
        await this.audit.record(
          auth,
          {
            organizationId: auth.organizationId,
            action: 'apikey.rotated',
            resourceType: 'api_key',
            resourceId: id,
            metadata: { previousPrefix: record.prefix, prefix },
          },
          manager,
        );
        return { key, record: { ...record, prefix, lastUsedAt: null } };
      })
      .finally(() => this.forget(id));
  }

  async revoke(auth: OrgAuthContext, id: string): Promise<void> {
    await this.revokeInTransaction(auth, id).finally(() => this.forget(id));
  }

  /**
   * Revokes the personal (`gpat_`) keys a user holds in the organization, in the caller's
   * transaction (a removed member's), and announces it to every instance when that commits.
   */
  async revokePersonalKeys(organizationId: string, userId: string, manager: EntityManager): Promise<void> {
    await manager.query(
      `UPDATE api_keys SET revoked_at = now(), updated_at = now()
        WHERE organization_id = $1 AND created_by = $2 AND key_type = 'gpat' AND revoked_at IS NULL`,
      [organizationId, userId],
    );
    await announceApiKeysRevoked(manager, { organizationId, userId });
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

  private async revokeInTransaction(auth: OrgAuthContext, id: string): Promise<void> {
    await this.dataSource.transaction(async (manager) => {
      const record = await this.findActive(manager, auth.organizationId, id);
      await manager.update(ApiKey, { id }, { revokedAt: new Date() });
      await announceApiKeysRevoked(manager, { keyId: id });
      await this.audit.record(
        auth,
        {
          organizationId: auth.organizationId,
          action: 'apikey.revoked',
          resourceType: 'api_key',
          resourceId: id,
          metadata: { prefix: record.prefix },
        },
        manager,
      );
    });
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
  async personalRole(key: ApiKey): Promise<Role | null> {
    if (!key.createdBy) return null;
    const rows: { role: string | null; is_super_admin: boolean }[] = await this.dataSource.query(
      `SELECT m.role, u.is_super_admin
         FROM ${usersFrom('u')} ${membershipJoin('m', 'u.id', '$2', { left: true })}
        WHERE u.id = $1 AND u.status = 'active'`,
      [key.createdBy, key.organizationId],
    );
    const row = rows[0];
    if (!row) return null;
    if (row.is_super_admin) return 'owner';
    return (ROLES as readonly string[]).includes(row.role ?? '') ? (row.role as Role) : null;
  }

  private async lookup(hash: string): Promise<AuthenticatedKey | null> {
    const rows: (Record<string, unknown> & { creator_email: string | null; service_tier: string })[] =
      await this.dataSource.query(
        `SELECT k.id, k.organization_id, k.created_by, k.name, k.key_type, k.prefix, k.scopes, k.last_used_at,
              k.expires_at, k.created_at, u.email AS creator_email, o.tier AS service_tier
         FROM api_keys k
         ${organizationJoin('o', 'k.organization_id')}
         LEFT JOIN ${usersFrom('u')} ON u.id = k.created_by
        WHERE k.key_hash = $1 AND o.active AND k.revoked_at IS NULL AND (k.expires_at IS NULL OR k.expires_at > now())`,
        [hash],
      );
    const row = rows[0];
    if (!row) return null;
    const key = Object.assign(new ApiKey(), {
      id: row.id,
      organizationId: row.organization_id,
      createdBy: row.created_by,
      name: row.name,
      keyType: row.key_type,
      prefix: row.prefix,
      scopes: row.scopes,
      lastUsedAt: row.last_used_at,
      expiresAt: row.expires_at,
      createdAt: row.created_at,
    });
    this.touch(key);
    return { key, creatorEmail: row.creator_email, serviceTier: row.service_tier };
  }

  private touch(key: ApiKey): void {
    if (key.lastUsedAt && Date.now() - key.lastUsedAt.getTime() < LAST_USED_RESOLUTION_MS) return;
    key.lastUsedAt = new Date();
    void this.dataSource
      .query(`UPDATE api_keys SET last_used_at = now() WHERE id = $1`, [key.id])
      .catch(() => undefined);
  }

  private async findActive(manager: EntityManager, organizationId: string, id: string): Promise<ApiKey> {
    const record = await manager.findOne(ApiKey, { where: { id, organizationId, revokedAt: IsNull() } });
    if (!record) throw notFound('API key');
    return record;
  }

  private async assertAdminTeamScopeAllowed(manager: EntityManager, organizationId: string): Promise<void> {
    if (!planAllows((await this.plans.planOf(organizationId, { manager })).tier, 'adminTeamScope')) {
      throw forbidden(PLAN_RULES.adminTeamScope.refusal, {
        hint: 'Upgrade to Enterprise or choose other scopes',
      });
    }
  }
}
