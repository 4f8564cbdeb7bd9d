import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { apnsPayload, type PushNotice } from './apns-payload.js';

/**
 * Where features announce what their subscribers' devices should be told. Written in the
 * caller's transaction, with the change it announces; one delivery per registered push token of
 * the subscribers, only when the app has APNs credentials (without them the stored inbox is
 * the whole story). The dispatcher delivers them.
 */
@Injectable()
export class PushOutbox {
  async enqueue(
    manager: EntityManager,
    target: { organizationId: string; appId: string | null; subscriberIds: readonly string[] },
    notice: PushNotice,
  ): Promise<void> {
    if (!target.appId || target.subscriberIds.length === 0) return;
    await manager.query(
      `INSERT INTO push_deliveries (organization_id, app_id, push_token_id, device_token, payload)
       SELECT t.organization_id, t.app_id, t.id, t.device_token, $4::jsonb
         FROM push_tokens t
        WHERE t.app_id = $2 AND t.organization_id = $1 AND t.subscriber_id = ANY($3::text[])
          AND EXISTS (SELECT 1 FROM push_credentials c WHERE c.app_id = $2)`,
      [target.organizationId, target.appId, [...new Set(target.subscriberIds)], apnsPayload(notice)],
    );
  }
}
