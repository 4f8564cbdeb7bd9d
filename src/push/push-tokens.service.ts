import { Injectable } from '@nestjs/common';
import type { Tenant } from '../apps/tenant-resolver.js';
import { UnitOfWork } from '../database/unit-of-work.js';
import type { RegisterPushTokenDto } from './push.dto.js';
import { PushTokensRepository } from './push-tokens.repository.js';

/** Push tokens one subscriber may hold in an app (phones, tablets); the oldest make room. */
export const MAX_PUSH_TOKENS_PER_SUBSCRIBER = 10;

/** Registration of APNs device tokens by the SDK. */
@Injectable()
export class PushTokensService {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly tokens: PushTokensRepository,
  ) {}

  /**
   * A token names one device of the app: registering it again (a reinstall, another user on the
   * device) moves it to the new subscriber. `keyId`: the attestation key that registered it.
   */
  async register(tenant: Tenant, keyId: string, input: RegisterPushTokenDto) {
    const row = await this.uow.run(() =>
      this.tokens.register(
        tenant,
        { deviceToken: input.pushToken.toLowerCase(), subscriberId: input.subscriberId, keyId },
        MAX_PUSH_TOKENS_PER_SUBSCRIBER,
      ),
    );
    return { id: row.id, subscriberId: input.subscriberId, createdAt: row.created_at, updatedAt: row.updated_at };
  }
}
