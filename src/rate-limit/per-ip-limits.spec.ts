import { describe, expect, it } from '@jest/globals';
import { ipSubject, PER_IP_LIMITS } from './per-ip-limits.js';

describe('per-IP limits', () => {
  it('holds the documented values', () => {
    expect(PER_IP_LIMITS).toEqual({
      login: { bucket: 'ip-login', limit: 10 },
      passwordReset: { bucket: 'ip-password-reset', limit: 5 },
      challenge: { bucket: 'ip-challenge', limit: 120 },
      validate: { bucket: 'ip-validate', limit: 60 },
    });
  });

  it.each([
    ['203.0.113.7', '203.0.113.7'],
    ['::ffff:203.0.113.7', '203.0.113.7'],
    ['2001:db8:1:2:aaaa:bbbb:cccc:dddd', '2001:db8:1:2::/64'],
    ['2001:db8:1:2::1', '2001:db8:1:2::/64'],
    ['not an address', 'unknown'],
    [undefined, 'unknown'],
  ])('limits %s as %s', (ip, subject) => {
    expect(ipSubject(ip)).toBe(subject);
  });
});
