import { randomUUID } from 'node:crypto';
import { trustOrganizationId, type OrganizationId } from '../../src/common/access/tenant-id.js';
import { ApiKey } from '../../src/api-keys/api-key.entity.js';
import type {
  ApiKeyRecord,
  ApiKeyRevocation,
  ApiKeysRepository,
  NewApiKeyRow,
} from '../../src/api-keys/api-keys.repository.js';
import type { PgListener } from '../../src/database/pg-listener.js';
import { ApiKeysService } from '../../src/api-keys/api-keys.service.js';
import { PlanService } from '../../src/organizations/plan.service.js';
import type { OrganizationsService } from '../../src/organizations/organizations.service.js';
import type { UsersService } from '../../src/users/users.service.js';
import { testConfig } from './config.js';
import type { FakeUnitOfWork } from './unit-of-work.js';

type Public<T> = { [K in keyof T]: T[K] };

/** api_keys in memory (with their secret hashes), and the revocations announced. */
export class FakeApiKeysRepository implements Public<ApiKeysRepository> {
  readonly keys: (ApiKey & { keyHash: string })[] = [];
  readonly announced: ApiKeyRevocation[] = [];
  readonly touched: string[] = [];

  listActive(organizationId: OrganizationId): Promise<ApiKey[]> {
    return Promise.resolve(this.keys.filter((k) => k.organizationId === organizationId && !k.revokedAt).reverse());
  }

  insert(organizationId: OrganizationId, row: NewApiKeyRow): Promise<ApiKey & { organizationId: OrganizationId }> {
    const key = Object.assign(new ApiKey(), {
      id: randomUUID(),
      organizationId,
      ...row,
      lastUsedAt: null,
      revokedAt: null,
      createdAt: new Date(),
      updatedAt: new Date(),
    });
    this.keys.push(key);
    return Promise.resolve(key);
  }

  findActive(organizationId: OrganizationId, id: string): Promise<ApiKey | null> {
    return Promise.resolve(
      this.keys.find((k) => k.id === id && k.organizationId === organizationId && !k.revokedAt) ?? null,
    );
  }

  replaceSecret(organizationId: OrganizationId, id: string, prefix: string, keyHash: string): Promise<void> {
    const key = this.keys.find((k) => k.id === id && k.organizationId === organizationId);
    if (key) Object.assign(key, { prefix, keyHash, lastUsedAt: null });
    return Promise.resolve();
  }

  revoke(organizationId: OrganizationId, id: string): Promise<void> {
    const key = this.keys.find((k) => k.id === id && k.organizationId === organizationId);
    if (key) key.revokedAt = new Date();
    return Promise.resolve();
  }

  revokePersonal(organizationId: OrganizationId, userId: string): Promise<void> {
    for (const key of this.keys) {
      if (key.organizationId === organizationId && key.createdBy === userId && key.keyType === 'gpat' && !key.revokedAt)
        key.revokedAt = new Date();
    }
    return Promise.resolve();
  }

  announceRevoked(revocation: ApiKeyRevocation): Promise<void> {
    this.announced.push(revocation);
    return Promise.resolve();
  }

  findLiveByHash(keyHash: string): Promise<ApiKeyRecord | null> {
    const key = this.keys.find(
      (k) => k.keyHash === keyHash && !k.revokedAt && (!k.expiresAt || k.expiresAt.getTime() > Date.now()),
    );
    return Promise.resolve(
      key ? Object.assign(key, { organizationId: trustOrganizationId(key.organizationId) }) : null,
    );
  }

  touch(id: string): Promise<void> {
    this.touched.push(id);
    return Promise.resolve();
  }

  /** Nothing listens in memory. */
  revocationListener(): PgListener {
    return { start: () => Promise.resolve(), close: () => Promise.resolve() } as unknown as PgListener;
  }
}

/** ApiKeysService over an in-memory key store. */
export function fakeApiKeys(
  uow: FakeUnitOfWork,
  organizations: OrganizationsService,
  users: UsersService,
  audit: ConstructorParameters<typeof ApiKeysService>[2],
  repository = new FakeApiKeysRepository(),
): { apiKeys: ApiKeysService; keys: FakeApiKeysRepository } {
  return {
    apiKeys: new ApiKeysService(
      uow.asUnitOfWork(),
      repository as unknown as ApiKeysRepository,
      audit,
      testConfig,
      new PlanService(organizations),
      organizations,
      users,
    ),
    keys: repository,
  };
}
