import { beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { FakeUnitOfWork } from '../../test/fakes/unit-of-work.js';
import { FakeServiceSecretsRepository } from '../../test/fakes/auth.js';
import { FakeUsersRepository } from '../../test/fakes/users.js';
import type { AppConfig } from '../config/app-config.js';
import type { RateLimitService } from '../rate-limit/rate-limit.service.js';
import { AccountLifecycleService } from '../users/account-lifecycle.service.js';
import type { UsersRepository } from '../users/users.repository.js';
import { UsersService } from '../users/users.service.js';
import { PasswordGate, SIGN_IN_BUDGETS, type PasswordAttempt } from './password-gate.js';
import { hashPassword } from './passwords.js';
import type { ServiceSecretsRepository } from './service-secrets.repository.js';
import { fakeDiscovery } from '../../test/harness/fake-discovery.js';

/** Sliding-window counters as the rate-limit store keeps them, without the clock. */
class FakeLimits {
  readonly counts = new Map<string, number>();

  peek(key: string, windowMs: number, limit: number) {
    return Promise.resolve(this.record(key, windowMs, limit));
  }

  increment(key: string, windowMs: number, limit: number) {
    this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
    return Promise.resolve(this.record(key, windowMs, limit));
  }

  private record(key: string, windowMs: number, limit: number) {
    const used = this.counts.get(key) ?? 0;
    const allowed = used < limit;
    return {
      decision: {
        allowed,
        limit,
        remaining: Math.max(0, limit - used),
        resetAt: Date.now() + windowMs,
        retryAfterMs: allowed ? 0 : windowMs,
        windowMs,
      },
    };
  }
}

const config = {
  bcryptRounds: 4,
  sessionSecret: 's'.repeat(48),
  sessionCookieSameSite: 'lax',
  baseUrl: 'http://localhost',
} as unknown as AppConfig;

describe('PasswordGate (failure budgets, on fakes)', () => {
  let hash: string;
  let accounts: FakeUsersRepository;
  let limits: FakeLimits;
  let gate: PasswordGate;
  const attempt = (overrides: Partial<PasswordAttempt> = {}): PasswordAttempt => ({
    email: 'ann@example.com',
    password: 'right-password',
    clientIp: '203.0.113.7',
    deviceCookie: undefined,
    ...overrides,
  });
  const refusal = (promise: Promise<unknown>) =>
    promise.then(
      () => 'signed in',
      (error: { getStatus(): number; code: string }) => `${error.getStatus()} ${error.code}`,
    );

  beforeAll(async () => {
    hash = await hashPassword('right-password', 4);
  });

  beforeEach(() => {
    accounts = new FakeUsersRepository();
    accounts.add({ email: 'ann@example.com', passwordHash: hash });
    limits = new FakeLimits();
    const users = new UsersService(
      new FakeUnitOfWork().asUnitOfWork(),
      accounts as unknown as UsersRepository,
      new AccountLifecycleService(fakeDiscovery(() => [])),
    );
    gate = new PasswordGate(
      new FakeServiceSecretsRepository() as unknown as ServiceSecretsRepository,
      config,
      users,
      limits as unknown as RateLimitService,
    );
  });

  it('answers a wrong password and an unknown address alike, and both spend the address’s and the client’s budgets', async () => {
    expect(await refusal(gate.check(attempt({ password: 'wrong-password' })))).toBe('401 invalid_credentials');
    expect(await refusal(gate.check(attempt({ email: 'nobody@example.com' })))).toBe('401 invalid_credentials');
    expect(limits.counts.get(`${SIGN_IN_BUDGETS.ip.key}:203.0.113.7`)).toBe(2);
    expect([...limits.counts.keys()].filter((key) => key.startsWith(SIGN_IN_BUDGETS.account.key))).toHaveLength(2);
  });

  it('refuses the right password once the address’s budget is spent, with the answer of a wrong one', async () => {
    for (let i = 0; i < SIGN_IN_BUDGETS.account.limit; i++)
      await refusal(gate.check(attempt({ password: 'nope-nope' })));
    expect(await refusal(gate.check(attempt()))).toBe('401 invalid_credentials');
    expect(await refusal(gate.check(attempt({ email: 'nobody@example.com' })))).toBe('401 invalid_credentials');
  });

  it('answers 429 once the client address has spent its budget across accounts', async () => {
    for (let i = 0; i < SIGN_IN_BUDGETS.ip.limit; i++) {
      await refusal(gate.check(attempt({ email: `user${i}@example.com` })));
    }
    expect(await refusal(gate.check(attempt()))).toBe('429 rate_limited');
  });

  it('lets a browser that signed in before through a spent address budget, spending only its own', async () => {
    const user = await gate.check(attempt());
    const cookie = await gate.deviceCookieAfterSignIn(user, undefined);
    for (let i = 0; i < SIGN_IN_BUDGETS.account.limit; i++)
      await refusal(gate.check(attempt({ password: 'nope-nope' })));
    expect(await refusal(gate.check(attempt({ deviceCookie: cookie })))).toBe('signed in');
    expect(await refusal(gate.check(attempt({ deviceCookie: cookie, password: 'nope-nope' })))).toBe(
      '401 invalid_credentials',
    );
    const deviceKeys = [...limits.counts.keys()].filter((key) => key.startsWith(SIGN_IN_BUDGETS.device.key));
    expect(deviceKeys).toHaveLength(1);
    expect(limits.counts.get(`${SIGN_IN_BUDGETS.ip.key}:203.0.113.7`)).toBe(SIGN_IN_BUDGETS.account.limit);
  });

  it('forgets the browser once the password changes (the device key is bound to it)', async () => {
    const user = await gate.check(attempt());
    const cookie = await gate.deviceCookieAfterSignIn(user, undefined);
    accounts.rows.get(user.id)!.passwordHash = await hashPassword('new-password', 4);
    await refusal(gate.check(attempt({ deviceCookie: cookie, password: 'nope-nope' })));
    expect([...limits.counts.keys()].some((key) => key.startsWith(SIGN_IN_BUDGETS.device.key))).toBe(false);
  });
});
