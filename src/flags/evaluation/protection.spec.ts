import { describe, expect, it } from '@jest/globals';
import type { FlagEnvironmentConfig } from './flag-types.js';
import { protectedEnvironments, type ProtectedFlag } from './protection.js';

const off: FlagEnvironmentConfig = { enabled: false, value: 'false', rules: [] };
function flag(key: string, production: string[] = [], staging: string[] = []): ProtectedFlag {
  const env = (keys: string[]) => ({ ...off, prerequisites: keys.map((flagKey) => ({ flagKey, value: 'true' })) });
  return { key, environments: { production: env(production), staging: env(staging), development: off } };
}

describe('the reach of a protection', () => {
  it('reaches the prerequisites of a protected key, at any depth, in that environment only', () => {
    const flags = [flag('top', ['mid'], ['side']), flag('mid', ['leaf']), flag('leaf'), flag('side'), flag('other')];
    const protections = [{ flagKey: 'top', environment: 'production' as const }];
    expect(protectedEnvironments('top', flags, protections)).toEqual(['production']);
    expect(protectedEnvironments('mid', flags, protections)).toEqual(['production']);
    expect(protectedEnvironments('leaf', flags, protections)).toEqual(['production']);
    // `side` is a prerequisite of `top` in staging, which is not protected.
    expect(protectedEnvironments('side', flags, protections)).toEqual([]);
    expect(protectedEnvironments('other', flags, protections)).toEqual([]);
  });

  it('protects a key that has no flag (deleted), and survives a cycle in stored data', () => {
    const protections = [
      { flagKey: 'gone', environment: 'staging' as const },
      { flagKey: 'a', environment: 'development' as const },
    ];
    expect(protectedEnvironments('gone', [], protections)).toEqual(['staging']);
    const cyclic: ProtectedFlag[] = [
      {
        key: 'a',
        environments: {
          production: off,
          staging: off,
          development: { ...off, prerequisites: [{ flagKey: 'b', value: 'true' }] },
        },
      },
      {
        key: 'b',
        environments: {
          production: off,
          staging: off,
          development: { ...off, prerequisites: [{ flagKey: 'a', value: 'true' }] },
        },
      },
    ];
    expect(protectedEnvironments('b', cyclic, protections)).toEqual(['development']);
  });
});
