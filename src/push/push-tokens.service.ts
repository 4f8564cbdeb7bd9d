import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { Tenant } from '../apps/tenant-resolver.js';
import type { RegisterPushTokenDto } from './push.dto.js';

/** Push tokens one subscriber may hold in an app (phones, tablets); the oldest make room. */
export const MAX_PUSH_TOKENS_PER_SUBSCRIBER = 10;

/** Registration of APNs device tokens by the SDK. */
@Injectable()
export class PushTokensService {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /**
   * A token names one device of the app: registering it again (a reinstall, another user on the
   * device) moves it to the new subscriber. `keyId`: the attestation key that registered it.
   */
  async register(tenant: Tenant, keyId: string, input: RegisterPushTokenDto) {
    const deviceToken = input.pushToken.toLowerCase();
    return this.dataSource.transaction(async (manager) => {
      const [row] = await manager.query<{ id: string; created_at: Date; updated_at: Date }[]>(
        `INSERT INTO push_tokens (organization_id, app_id, device_token, subscriber_id, key_id)
         VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (app_id, device_token) DO UPDATE SET subscriber_id = EXCLUDED.subscriber_id,
           key_id = EXCLUDED.key_id, updated_at = now()
         RETURNING id, created_at, updated_at`,
        [tenant.organizationId, tenant.appId, deviceToken, input.subscriberId, keyId],
      );
      await manager.query(
        `DELETE FROM push_tokens WHERE id IN (
           SELECT id FROM push_tokens WHERE app_id = $1 AND subscriber_id = $2
            ORDER BY updated_at DESC, id DESC OFFSET ${MAX_PUSH_TOKENS_PER_SUBSCRIBER})`,
        [tenant.appId, input.subscriberId],
      );
      return { id: row.id, subscriberId: input.subscriberId, createdAt: row.created_at, updatedAt: row.updated_at };
    });
  }
}
