import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from '@jest/globals';

const root = new URL('../..', import.meta.url).pathname;

function files(dir: string, suffix: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return files(path, suffix);
    return entry.name.endsWith(suffix) ? [path] : [];
  });
}

/**
 * Limits are declared on routes (`@RateLimit`, enforced by @nestjs/throttler's guard) and callers
 * are authenticated by passport strategies: no controller calls the limiter or checks a key or a
 * device token by hand, so the access matrix and the limits table stay the whole truth. (The
 * device-login pages read the cookie session themselves, to answer with pages rather than 401s.)
 */
describe('the access and limit stack', () => {
  const controllers = files(join(root, 'src'), '.controller.ts');

  it('no controller calls a limiter or checks a key or a device token by hand', () => {
    expect(controllers.length).toBeGreaterThan(20);
    const offenders = controllers
      .filter((path) => {
        const source = readFileSync(path, 'utf8');
        return (
          /RateLimitService|RATE_LIMIT_STORE|\.increment\(|\.peek\(/.test(source) ||
          /\.authenticate\(|DeviceTokenVerifier/.test(source)
        );
      })
      .map((path) => relative(root, path));
    expect(offenders).toEqual([]);
  });
});
