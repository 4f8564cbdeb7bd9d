import { describe, expect, it } from '@jest/globals';
import type { Tenant } from '../apps/tenant-resolver.js';
import { FakePushTokensRepository } from '../../test/fakes/push.js';
import { FakeUnitOfWork } from '../../test/fakes/unit-of-work.js';
import { MAX_PUSH_TOKENS_PER_SUBSCRIBER, PushTokensService } from './push-tokens.service.js';

const ORG = '00000000-0000-4000-8000-00000000000a';
const APP = '00000000-0000-4000-8000-0000000000a1';

describe('PushTokensService', () => {
  const tenant = { organizationId: ORG, appId: APP } as Tenant;

  it(`moves a token to its new subscriber and keeps a subscriber's ${MAX_PUSH_TOKENS_PER_SUBSCRIBER} newest`, async () => {
    const tokens = new FakePushTokensRepository();
    const service = new PushTokensService(new FakeUnitOfWork().asUnitOfWork(), tokens as never);
    await service.register(tenant, 'key-1', { pushToken: 'AA01', subscriberId: 'alice' });
    await service.register(tenant, 'key-2', { pushToken: 'aa01', subscriberId: 'bob' });
    expect(tokens.rows.map((row) => [row.deviceToken, row.subscriberId])).toEqual([['aa01', 'bob']]);
    for (let i = 0; i < MAX_PUSH_TOKENS_PER_SUBSCRIBER + 2; i++) {
      await service.register(tenant, 'key', { pushToken: `bb${i}`, subscriberId: 'carol' });
    }
    const carols = tokens.rows.filter((row) => row.subscriberId === 'carol').map((row) => row.deviceToken);
    expect(carols).toHaveLength(MAX_PUSH_TOKENS_PER_SUBSCRIBER);
    expect(carols).not.toContain('bb0');
    expect(carols).toContain(`bb${MAX_PUSH_TOKENS_PER_SUBSCRIBER + 1}`);
  });
});
