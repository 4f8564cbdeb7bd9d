import { randomUUID } from 'node:crypto';
import type { Tenant } from '../../src/apps/tenant-resolver.js';
import type { AppId, OrganizationId } from '../../src/common/access/tenant-id.js';
import type {
  PushCredentialsRepository,
  PushCredentialsRow,
  SealedPushCredentials,
} from '../../src/push/push-credentials.repository.js';
import type { ClaimedPush, PushDeliveriesRepository } from '../../src/push/push-deliveries.repository.js';
import type { PushTokensRepository } from '../../src/push/push-tokens.repository.js';

interface TokenRow {
  id: string;
  organizationId: string;
  appId: string;
  deviceToken: string;
  subscriberId: string;
  keyId: string;
  created_at: Date;
  updated_at: Date;
}

/** `push_tokens` in memory. */
export class FakePushTokensRepository implements Pick<PushTokensRepository, keyof PushTokensRepository> {
  rows: TokenRow[] = [];
  private clock = 0;

  register(tenant: Tenant, input: { deviceToken: string; subscriberId: string; keyId: string }, keep: number) {
    // A strictly increasing clock: registrations in one test never tie.
    const now = new Date(Date.UTC(2026, 0, 1) + ++this.clock);
    let row = this.rows.find(
      (candidate) => candidate.appId === tenant.appId && candidate.deviceToken === input.deviceToken,
    );
    if (row) Object.assign(row, { subscriberId: input.subscriberId, keyId: input.keyId, updated_at: now });
    else {
      row = {
        id: randomUUID(),
        organizationId: tenant.organizationId,
        appId: tenant.appId,
        ...input,
        created_at: now,
        updated_at: now,
      };
      this.rows.push(row);
    }
    const kept = this.rows
      .filter((candidate) => candidate.appId === tenant.appId && candidate.subscriberId === input.subscriberId)
      .sort((a, b) => b.updated_at.getTime() - a.updated_at.getTime())
      .slice(keep);
    this.rows = this.rows.filter((candidate) => !kept.includes(candidate));
    return Promise.resolve({ id: row.id, created_at: row.created_at, updated_at: row.updated_at });
  }

  removeDead(appId: AppId, deviceToken: string) {
    this.rows = this.rows.filter((row) => !(row.appId === appId && row.deviceToken === deviceToken));
    return Promise.resolve();
  }
}

/** `push_credentials` in memory, and the stored encryption key. */
export class FakePushCredentialsRepository implements Pick<PushCredentialsRepository, keyof PushCredentialsRepository> {
  readonly rows = new Map<string, PushCredentialsRow & { organizationId: string; sealedKey: string }>();
  private storedKey: string | null = null;

  find(organizationId: OrganizationId, appId: string) {
    const row = this.rows.get(appId);
    return Promise.resolve(row && row.organizationId === organizationId ? row : null);
  }

  upsert(
    organizationId: OrganizationId,
    appId: string,
    input: { keyId: string; teamId: string; sealedKey: string; environment: string },
  ) {
    const now = new Date();
    const row = {
      organizationId,
      key_id: input.keyId,
      team_id: input.teamId,
      environment: input.environment,
      sealedKey: input.sealedKey,
      created_at: this.rows.get(appId)?.created_at ?? now,
      updated_at: now,
    };
    this.rows.set(appId, row);
    return Promise.resolve(row);
  }

  remove(organizationId: OrganizationId, appId: string) {
    const row = this.rows.get(appId);
    if (!row || row.organizationId !== organizationId) return Promise.resolve(false);
    this.rows.delete(appId);
    return Promise.resolve(true);
  }

  sealedFor(appId: AppId): Promise<SealedPushCredentials | null> {
    const row = this.rows.get(appId);
    return Promise.resolve(
      row
        ? {
            key_id: row.key_id,
            team_id: row.team_id,
            environment: row.environment,
            private_key_encrypted: row.sealedKey,
            version: row.updated_at.toISOString(),
          }
        : null,
    );
  }

  storedEncryptionKey(generate: () => string) {
    this.storedKey ??= generate();
    return Promise.resolve(this.storedKey);
  }
}

/** `push_deliveries` in memory: what the outbox enqueued. Enqueued pushes reach every subscriber given (tokens are not consulted). */
export class FakePushDeliveriesRepository implements Pick<PushDeliveriesRepository, keyof PushDeliveriesRepository> {
  readonly enqueued: {
    organizationId: string;
    appId: string;
    subscriberIds: string[];
    payload: Record<string, unknown>;
  }[] = [];

  enqueue(organizationId: OrganizationId, appId: string, subscriberIds: readonly string[], payload: string) {
    this.enqueued.push({
      organizationId,
      appId,
      subscriberIds: [...subscriberIds],
      payload: JSON.parse(payload) as Record<string, unknown>,
    });
    return Promise.resolve();
  }

  claimDue(): Promise<ClaimedPush[]> {
    return Promise.resolve([]);
  }

  retryLater() {
    return Promise.resolve();
  }

  finish() {
    return Promise.resolve();
  }

  pruneFinished() {
    return Promise.resolve();
  }
}
