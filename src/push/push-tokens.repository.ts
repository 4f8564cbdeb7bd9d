import { Injectable } from '@nestjs/common';
import type { Tenant } from '../apps/tenant-resolver.js';
import type { AppId } from '../common/access/tenant-id.js';
import { UnitOfWork } from '../database/unit-of-work.js';

/** A registered token as the SDK's registration answers it. */
export interface PushTokenRow {
  id: string;
  created_at: Date;
  updated_at: Date;
}

/** The owner of `push_tokens`: the APNs device tokens the SDK registers, per app and subscriber. */
@Injectable()
export class PushTokensRepository {
  constructor(private readonly uow: UnitOfWork) {}

  /**
   * Registers `deviceToken` of the tenant's app for `subscriberId` (moving it there when another
   * subscriber held it), then keeps only the subscriber's `keep` most recently registered tokens.
   */
  async register(
    tenant: Tenant,
    input: { deviceToken: string; subscriberId: string; keyId: string },
    keep: number,
  ): Promise<PushTokenRow> {
    const manager = this.uow.manager();
    const [row] = await manager.query<PushTokenRow[]>(
      `INSERT INTO push_tokens (organization_id, app_id, device_token, subscriber_id, key_id)
       VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (app_id, device_token) DO UPDATE SET subscriber_id = EXCLUDED.subscriber_id,
         key_id = EXCLUDED.key_id, updated_at = now()
       RETURNING id, created_at, updated_at`,
      [tenant.organizationId, tenant.appId, input.deviceToken, input.subscriberId, input.keyId],
    );
    await manager.query(
      `DELETE FROM push_tokens WHERE id IN (
         SELECT id FROM push_tokens WHERE app_id = $1 AND organization_id = $2 AND subscriber_id = $3
          ORDER BY updated_at DESC, id DESC OFFSET $4)`,
      [tenant.appId, tenant.organizationId, input.subscriberId, keep],
    );
    return row;
  }

  /** Forgets a device token APNs called dead. */
  async removeDead(appId: AppId, deviceToken: string): Promise<void> {
    await this.uow
      .manager()
      .query(`DELETE FROM push_tokens WHERE app_id = $1 AND device_token = $2`, [appId, deviceToken]);
  }
}
