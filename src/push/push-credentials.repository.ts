import { Injectable } from '@nestjs/common';
import type { AppId, OrganizationId } from '../common/access/tenant-id.js';
import { queryRows } from '../database/sql.js';
import { storedServiceSecret } from '../database/service-settings.js';
import { UnitOfWork } from '../database/unit-of-work.js';

/** An app's APNs credentials as the console shows them (never the key). */
export interface PushCredentialsRow {
  key_id: string;
  team_id: string;
  environment: string;
  created_at: Date;
  updated_at: Date;
}

/** What the dispatcher signs with: the sealed key and a version that changes with every write. */
export interface SealedPushCredentials {
  key_id: string;
  team_id: string;
  private_key_encrypted: string;
  environment: string;
  version: string;
}

/** The owner of `push_credentials` (and of the push encryption key kept in `service_settings`). */
@Injectable()
export class PushCredentialsRepository {
  constructor(private readonly uow: UnitOfWork) {}

  /** The organization's credentials of the app, or null. */
  async find(organizationId: OrganizationId, appId: string): Promise<PushCredentialsRow | null> {
    const rows = await this.uow.manager().query<PushCredentialsRow[]>(
      `SELECT key_id, team_id, environment, created_at, updated_at
         FROM push_credentials WHERE app_id = $1 AND organization_id = $2`,
      [appId, organizationId],
    );
    return rows[0] ?? null;
  }

  /** Sets the app's credentials (the key already sealed), replacing earlier ones. */
  async upsert(
    organizationId: OrganizationId,
    appId: string,
    input: { keyId: string; teamId: string; sealedKey: string; environment: string },
  ): Promise<PushCredentialsRow> {
    const [saved] = await this.uow.manager().query<PushCredentialsRow[]>(
      `INSERT INTO push_credentials (app_id, organization_id, key_id, team_id, private_key_encrypted, environment)
       VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (app_id) DO UPDATE SET key_id = EXCLUDED.key_id, team_id = EXCLUDED.team_id,
         private_key_encrypted = EXCLUDED.private_key_encrypted, environment = EXCLUDED.environment,
         updated_at = now()
       RETURNING key_id, team_id, environment, created_at, updated_at`,
      [appId, organizationId, input.keyId, input.teamId, input.sealedKey, input.environment],
    );
    return saved;
  }

  /** Deletes the app's credentials; false when it had none. */
  async remove(organizationId: OrganizationId, appId: string): Promise<boolean> {
    const deleted = await queryRows<{ app_id: string }>(
      this.uow.manager(),
      `DELETE FROM push_credentials WHERE app_id = $1 AND organization_id = $2 RETURNING app_id`,
      [appId, organizationId],
    );
    return deleted.length > 0;
  }

  /** The credentials the dispatcher signs an app's pushes with, or null when the app has none. */
  async sealedFor(appId: AppId): Promise<SealedPushCredentials | null> {
    const rows = await this.uow.manager().query<SealedPushCredentials[]>(
      `SELECT key_id, team_id, private_key_encrypted, environment, updated_at::text AS version
         FROM push_credentials WHERE app_id = $1`,
      [appId],
    );
    return rows[0] ?? null;
  }

  /**
   * The stored push encryption key (base64), `generate()`d and stored the first time. Always
   * committed on its own, outside any open unit of work: a key kept in memory must never be one
   * a rollback took back.
   */
  storedEncryptionKey(generate: () => string): Promise<string> {
    return this.uow.outside(() => storedServiceSecret(this.uow.manager(), 'push_encryption_key', generate));
  }
}
