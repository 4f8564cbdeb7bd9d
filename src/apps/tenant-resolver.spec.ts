import { describe, expect, it } from '@jest/globals';
import { trustAppId, trustOrganizationId } from '../common/access/tenant-id.js';
import type { AndroidIdentityRepository, AndroidTenantRow } from './android-identity.repository.js';
import type { AppsRepository, TenantRow } from './apps.repository.js';
import { IDENTITY_HEADER_LIMITS, MAX_ENTRIES, MAX_MISSES, TenantResolver } from './tenant-resolver.js';

const APP: TenantRow = {
  id: trustAppId('00000000-0000-4000-8000-000000000001'),
  app_name: 'Notes',
  organization_id: trustOrganizationId('00000000-0000-4000-8000-0000000000aa'),
  service_tier: 'professional',
  current_period_end: null,
  billing_anchor_day: null,
  is_active: true,
  org_active: true,
  jwt_configuration: {},
  risk_thresholds: {},
  require_signed_subject: false,
  subject_signing_secret: null,
};

/** The two lookups over fixed rows: an iOS app `com.example.ios`/`ABCDE12345`, an Android-only app `com.example.android`. */
function resolver() {
  const lookups: string[] = [];
  const apps = {
    tenantOf: (bundleId: string, teamId: string) => {
      lookups.push(`ios ${bundleId} ${teamId}`);
      return Promise.resolve(bundleId === 'com.example.ios' && teamId === 'ABCDE12345' ? APP : null);
    },
  } as unknown as AppsRepository;
  const android = {
    tenantByPackage: (packageName: string) => {
      lookups.push(`android ${packageName}`);
      const row: AndroidTenantRow = { ...APP, bundle_id: null, team_id: null };
      return Promise.resolve(packageName === 'com.example.android' ? row : null);
    },
  } as unknown as AndroidIdentityRepository;
  return { tenants: new TenantResolver(apps, android), lookups };
}

describe('TenantResolver', () => {
  it('caches a lookup, a miss included, for the next call with the same headers', async () => {
    const { tenants, lookups } = resolver();
    expect((await tenants.resolve('com.example.ios', 'ABCDE12345'))?.appId).toBe(APP.id);
    expect(await tenants.resolve('com.example.other', 'ABCDE12345')).toBeNull();
    await tenants.resolve('com.example.ios', 'ABCDE12345');
    await tenants.resolve('com.example.other', 'ABCDE12345');
    expect(lookups).toEqual(['ios com.example.ios ABCDE12345', 'ios com.example.other ABCDE12345']);
  });

  it("never lets iOS headers write or read a package name's entry", async () => {
    const { tenants, lookups } = resolver();
    // `X-Bundle-ID: android` with the package as the team id: a miss, which must not name the package.
    expect(await tenants.resolve('android', 'com.example.android')).toBeNull();
    expect((await tenants.resolveAndroid('com.example.android'))?.packageName).toBe('com.example.android');
    // And the package's cached entry is not reached by those iOS headers either.
    expect(await tenants.resolve('android', 'com.example.android')).toBeNull();
    expect(lookups).toEqual(['ios android com.example.android', 'android com.example.android']);
  });

  it('forgets a package, a bundle or an app on demand', async () => {
    const { tenants, lookups } = resolver();
    await tenants.resolveAndroid('com.example.android');
    await tenants.resolve('com.example.ios', 'ABCDE12345');
    tenants.forgetPackage('com.example.android');
    tenants.forget('com.example.ios', 'ABCDE12345');
    await tenants.resolveAndroid('com.example.android');
    await tenants.resolve('com.example.ios', 'ABCDE12345');
    tenants.forgetApp(APP.id);
    await tenants.resolveAndroid('com.example.android');
    expect(lookups.filter((lookup) => lookup.startsWith('android'))).toHaveLength(3);
    expect(lookups.filter((lookup) => lookup.startsWith('ios'))).toHaveLength(2);
  });
});

describe('TenantResolver under a flood of made-up identities', () => {
  it('keeps the apps it found: misses only push out other misses', async () => {
    const { tenants, lookups } = resolver();
    await tenants.resolve('com.example.ios', 'ABCDE12345');
    await tenants.resolveAndroid('com.example.android');
    // More made-up identities than the cache holds apps.
    const flood = MAX_ENTRIES + 5;
    for (let index = 0; index < flood; index += 1) {
      expect(await tenants.resolve(`com.flood.${index}`, 'ZZZZZ99999')).toBeNull();
    }
    lookups.length = 0;
    expect((await tenants.resolve('com.example.ios', 'ABCDE12345'))?.appId).toBe(APP.id);
    expect((await tenants.resolveAndroid('com.example.android'))?.appId).toBe(APP.id);
    // The newest misses are still cached; the oldest were the ones forgotten.
    expect(await tenants.resolve(`com.flood.${flood - 1}`, 'ZZZZZ99999')).toBeNull();
    expect(lookups).toEqual([]);
    await tenants.resolve(`com.flood.${flood - MAX_MISSES - 1}`, 'ZZZZZ99999');
    expect(lookups).toEqual([`ios com.flood.${flood - MAX_MISSES - 1} ZZZZZ99999`]);
  });

  it('looks a cached miss up again once forgotten (forgetPackage, as registering a package does)', async () => {
    const { tenants, lookups } = resolver();
    expect(await tenants.resolveAndroid('com.example.later')).toBeNull();
    tenants.forgetPackage('com.example.later');
    await tenants.resolveAndroid('com.example.later');
    expect(lookups).toEqual(['android com.example.later', 'android com.example.later']);
  });
});

describe('TenantResolver and identities longer than any app has', () => {
  it('never looks them up nor caches them, by any of its lookups', async () => {
    const { tenants, lookups } = resolver();
    const { bundleId, teamId, packageName } = IDENTITY_HEADER_LIMITS;
    expect(await tenants.resolve('a'.repeat(bundleId + 1), 'ABCDE12345')).toBeNull();
    expect(await tenants.resolve('com.example.ios', 'T'.repeat(teamId + 1))).toBeNull();
    expect(await tenants.lookup('a'.repeat(16_000), 'ABCDE12345')).toBeNull();
    expect(await tenants.resolveAndroid('p'.repeat(packageName + 1))).toBeNull();
    expect(lookups).toEqual([]);
    // At the limits, a lookup as any other.
    await tenants.resolve('a'.repeat(bundleId), 'T'.repeat(teamId));
    await tenants.resolveAndroid('p'.repeat(packageName));
    expect(lookups).toHaveLength(2);
  });
});
