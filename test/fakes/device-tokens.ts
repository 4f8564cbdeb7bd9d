import { jest } from '@jest/globals';
import type { JWK } from 'jose';
import type { Tenant } from '../../src/apps/tenant-resolver.js';
import { fakeTenant } from './tenant.js';
import type { OrganizationId } from '../../src/common/access/tenant-id.js';
import type { ConsumedTokensRepository } from '../../src/device-tokens/consumed-tokens.repository.js';
import type { SigningKeysRepository } from '../../src/device-tokens/signing-keys.repository.js';
import type { TokenSubject } from '../../src/device-tokens/token.service.js';

interface StoredSigningKey {
  kid: string;
  privateKeyPem: string;
  publicJwk: JWK;
  isCurrent: boolean;
  /** Milliseconds since the epoch, by `Date.now()`, as `now()` in the database. */
  createdAt: number;
  retiredAt: number | null;
}

/**
 * `signing_keys` in memory (service-wide, shared by every instance built over it): one current key,
 * those retired, and the published ones as the repository selects them (the current one first,
 * then those retired within the grace, newest first). Times follow `Date.now()`; `publicKeyReads`
 * counts the reads of the published keys (verifiers and the JWKS).
 */
export class FakeSigningKeys implements Pick<
  SigningKeysRepository,
  'lockKeys' | 'current' | 'publicKeys' | 'makeCurrent'
> {
  readonly rows: StoredSigningKey[] = [];
  publicKeyReads = 0;

  lockKeys(): Promise<void> {
    return Promise.resolve();
  }

  current(): Promise<{ kid: string; privateKeyPem: string } | null> {
    const row = this.rows.find((candidate) => candidate.isCurrent);
    return Promise.resolve(row ? { kid: row.kid, privateKeyPem: row.privateKeyPem } : null);
  }

  publicKeys(graceSeconds: number): Promise<{ kid: string; publicJwk: JWK; verifiesUntil: number | null }[]> {
    this.publicKeyReads++;
    const since = Date.now() - graceSeconds * 1000;
    return Promise.resolve(
      this.rows
        .filter((row) => row.isCurrent || (row.retiredAt !== null && row.retiredAt > since))
        .sort((a, b) => Number(b.isCurrent) - Number(a.isCurrent) || b.createdAt - a.createdAt)
        .map((row) => ({
          kid: row.kid,
          publicJwk: structuredClone(row.publicJwk),
          verifiesUntil: row.isCurrent ? null : row.retiredAt! + graceSeconds * 1000,
        })),
    );
  }

  makeCurrent(kid: string, privateKeyPem: string, publicJwk: JWK): Promise<void> {
    const now = Date.now();
    for (const row of this.rows.filter((candidate) => candidate.isCurrent)) {
      Object.assign(row, { isCurrent: false, retiredAt: now });
    }
    const existing = this.rows.find((row) => row.kid === kid);
    if (existing) Object.assign(existing, { isCurrent: true, retiredAt: null });
    else this.rows.push({ kid, privateKeyPem, publicJwk, isCurrent: true, createdAt: now, retiredAt: null });
    return Promise.resolve();
  }

  asRepository(): SigningKeysRepository {
    return this as unknown as SigningKeysRepository;
  }
}

/**
 * `consumed_tokens` in memory: the primary key is the `jti` alone, and a consume is the check and
 * the insert in one step (INSERT … ON CONFLICT (jti) DO NOTHING), so of concurrent consumes of one
 * token on any number of instances exactly one is told it consumed it.
 */
export class FakeConsumedTokens implements Pick<ConsumedTokensRepository, 'consume' | 'isConsumed'> {
  readonly rows = new Map<string, { organizationId: string; appId: string; expiresAtS: number }>();

  async consume(organizationId: OrganizationId, jti: string, appId: string, expiresAtS: number): Promise<boolean> {
    // The statement is in flight while other requests run; the conflict is decided where it lands.
    await Promise.resolve();
    if (this.rows.has(jti)) return false;
    this.rows.set(jti, { organizationId, appId, expiresAtS });
    return true;
  }

  isConsumed(organizationId: OrganizationId, jti: string): Promise<boolean> {
    return Promise.resolve(this.rows.get(jti)?.organizationId === organizationId);
  }

  asRepository(): ConsumedTokensRepository {
    return this as unknown as ConsumedTokensRepository;
  }
}

/**
 * What a token is minted about after a successful attestation: a device of an iOS app of
 * `organizationId` (`tenant` overrides the app, `subject` the device).
 */
export function tokenSubject(
  organizationId: string,
  appId: string,
  overrides: { tenant?: Partial<Tenant>; subject?: Partial<Omit<TokenSubject, 'tenant'>> } = {},
): TokenSubject {
  return {
    tenant: fakeTenant(organizationId, appId, overrides.tenant),
    keyId: 'key-1',
    environment: 'production',
    riskScore: 12,
    attestationCount: 1,
    deviceModel: 'iPhone16,1',
    osVersion: '18.2',
    appVersion: '1.0',
    country: 'FR',
    jailbreakDetected: false,
    firstSeenAt: new Date(),
    failureCount: 0,
    subjectId: null,
    ...overrides.subject,
  };
}

/**
 * `Date.now()` held where the test puts it, for the services and the JWT libraries that read it
 * (the spec restores it after each test with `jest.restoreAllMocks()`).
 */
export function holdClock(start = Date.now()): { advance(ms: number): void } {
  let now = start;
  jest.spyOn(Date, 'now').mockImplementation(() => now);
  return {
    advance(ms: number) {
      now += ms;
    },
  };
}
