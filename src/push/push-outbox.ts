import { Injectable } from '@nestjs/common';
import type { OrganizationId } from '../common/access/tenant-id.js';
import { apnsPayload, type PushNotice } from './apns-payload.js';
import { PushDeliveriesRepository } from './push-deliveries.repository.js';

/**
 * Where features announce what their subscribers' devices should be told. Written in the
 * caller's unit of work, with the change it announces; one delivery per registered push token of
 * the subscribers, only when the app has APNs credentials (without them the stored inbox is
 * the whole story). The dispatcher delivers them.
 */
@Injectable()
export class PushOutbox {
  constructor(private readonly deliveries: PushDeliveriesRepository) {}

  async enqueue(
    organizationId: OrganizationId,
    target: { appId: string | null; subscriberIds: readonly string[] },
    notice: PushNotice,
  ): Promise<void> {
    if (!target.appId || target.subscriberIds.length === 0) return;
    await this.deliveries.enqueue(organizationId, target.appId, target.subscriberIds, apnsPayload(notice));
  }
}
