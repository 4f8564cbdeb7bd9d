import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, IsNull } from 'typeorm';
import type { ApiKeyScope } from '../common/access/access.decorator.js';
import { trustOrganizationId, type OrganizationId } from '../common/access/tenant-id.js';
import { PgListener, type PgListenerOptions } from '../database/pg-listener.js';
import { UnitOfWork } from '../database/unit-of-work.js';
import { ApiKey, type ApiKeyType } from './api-key.entity.js';

/** The channel on which committed key revocations reach every instance's memory of recent keys. */
export const API_KEY_REVOCATIONS_CHANNEL = 'api_key_revocations';

/** What stops remembered keys: one key, an organization's keys, or one member's keys in it. */
export type ApiKeyRevocation = { keyId: string } | { organizationId: OrganizationId; userId?: string };

/** A key as read back from its row: its organization id carries the tenant brand. */
export type ApiKeyRecord = ApiKey & { organizationId: OrganizationId };

/** What issuing a key writes. */
export interface NewApiKeyRow {
  createdBy: string | null;
  name: string;
  keyType: ApiKeyType;
  prefix: string;
  keyHash: string;
  scopes: ApiKeyScope[];
  expiresAt: Date | null;
}

/**
 * The owner of `api_keys`, and of the notifications that make every instance forget revoked keys.
 * Statements run in the open unit of work.
 */
@Injectable()
export class ApiKeysRepository {
  constructor(
    private readonly uow: UnitOfWork,
    @InjectDataSource() private readonly dataSource: DataSource,
  ) {}

  /** The organization's keys that are not revoked, newest first. */
  listActive(organizationId: OrganizationId): Promise<ApiKey[]> {
    return this.uow
      .manager()
      .getRepository(ApiKey)
      .find({
        where: { organizationId, revokedAt: IsNull() },
        order: { createdAt: 'DESC' },
      });
  }

  async insert(organizationId: OrganizationId, row: NewApiKeyRow): Promise<ApiKeyRecord> {
    const manager = this.uow.manager();
    const record = manager.create(ApiKey, {
      organizationId,
      ...row,
      lastUsedAt: null,
      revokedAt: null,
    });
    await manager.save(record);
    return Object.assign(record, { organizationId });
  }

  /** The organization's key `id` unless it is revoked. */
  findActive(organizationId: OrganizationId, id: string): Promise<ApiKey | null> {
    return this.uow.manager().findOne(ApiKey, { where: { id, organizationId, revokedAt: IsNull() } });
  }

  /** A new secret for the key; it has not been used since. */
  async replaceSecret(organizationId: OrganizationId, id: string, prefix: string, keyHash: string): Promise<void> {
    await this.uow.manager().update(ApiKey, { id, organizationId }, { prefix, keyHash, lastUsedAt: null });
  }

  async revoke(organizationId: OrganizationId, id: string): Promise<void> {
    await this.uow.manager().update(ApiKey, { id, organizationId }, { revokedAt: new Date() });
  }

  /** Revokes the personal (`gpat_`) keys a user holds in the organization. */
  async revokePersonal(organizationId: OrganizationId, userId: string): Promise<void> {
    await this.uow.manager().query(
      `UPDATE api_keys SET revoked_at = now(), updated_at = now()
        WHERE organization_id = $1 AND created_by = $2 AND key_type = 'gpat' AND revoked_at IS NULL`,
      [organizationId, userId],
    );
  }

  /** Tells every instance, when the unit of work commits, to forget the keys `revocation` names. */
  async announceRevoked(revocation: ApiKeyRevocation): Promise<void> {
    await this.uow
      .manager()
      .query(`SELECT pg_notify($1, $2)`, [API_KEY_REVOCATIONS_CHANNEL, JSON.stringify(revocation)]);
  }

  /** The live (not revoked, not expired) key with this secret hash, whatever its organization. */
  async findLiveByHash(keyHash: string): Promise<ApiKeyRecord | null> {
    const key = await this.uow
      .manager()
      .getRepository(ApiKey)
      .createQueryBuilder('k')
      .where('k.key_hash = :keyHash AND k.revoked_at IS NULL AND (k.expires_at IS NULL OR k.expires_at > now())', {
        keyHash,
      })
      .getOne();
    return key ? Object.assign(key, { organizationId: trustOrganizationId(key.organizationId) }) : null;
  }

  /** Records that the key was used now (its own statement, outside any unit of work). */
  async touch(id: string): Promise<void> {
    await this.uow.outside(() =>
      this.uow.manager().query(`UPDATE api_keys SET last_used_at = now() WHERE id = $1`, [id]),
    );
  }

  /** A listener on the revocations channel, on the database the service uses. */
  revocationListener(options: Omit<PgListenerOptions, 'url' | 'channel'>): PgListener {
    return new PgListener({
      ...options,
      url: (this.dataSource.options as { url?: string }).url,
      channel: API_KEY_REVOCATIONS_CHANNEL,
    });
  }
}
