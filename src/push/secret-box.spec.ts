import { randomBytes } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import { openSealed, seal } from './secret-box.js';

describe('secret box', () => {
  const key = randomBytes(32);

  it('opens what it sealed, and the sealed text shows nothing of the secret', () => {
    const sealed = seal(key, '-----BEGIN PRIVATE KEY-----\nabc\n-----END PRIVATE KEY-----');
    expect(sealed).not.toContain('PRIVATE');
    expect(openSealed(key, sealed)).toContain('abc');
    expect(seal(key, 'same')).not.toBe(seal(key, 'same'));
  });

  it('refuses a tampered box or another key', () => {
    const sealed = seal(key, 'secret');
    const raw = Buffer.from(sealed.slice(3), 'base64');
    raw[raw.length - 1] ^= 1;
    expect(() => openSealed(key, `v1.${raw.toString('base64')}`)).toThrow();
    expect(() => openSealed(randomBytes(32), sealed)).toThrow();
  });
});
