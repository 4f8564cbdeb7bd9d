import { describe, expect, it } from '@jest/globals';
import { ipSubject, LIMITS, limitOf, limitSubject } from './limits.js';

describe('limits', () => {
  it.each([
    ['203.0.113.7', '203.0.113.7'],
    ['::ffff:203.0.113.7', '203.0.113.7'],
    ['2001:db8:1:2:aaaa:bbbb:cccc:dddd', '2001:db8:1:2::/64'],
    ['2001:db8:1:2::1', '2001:db8:1:2::/64'],
    ['not an address', 'unknown'],
    [undefined, 'unknown'],
  ])('limits the client address %s as %s', (ip, subject) => {
    expect(ipSubject(ip)).toBe(subject);
  });

  it('counts an e-mail address by its hash, however it is typed, and nothing without one', () => {
    const one = limitSubject(LIMITS['register-email'], { body: { email: ' Ann@Example.com ' } });
    expect(one).toMatch(/^[0-9a-f]{64}$/);
    expect(limitSubject(LIMITS['register-email'], { body: { email: 'ann@example.com' } })).toBe(one);
    expect(limitSubject(LIMITS['register-email'], { body: {} })).toBeNull();
    expect(limitSubject(LIMITS['change-email-address'], { body: { new_email: 'ann@example.com' } })).toBe(one);
  });

  it('counts plan buckets by the organization, at the rate of its plan', () => {
    const tenant = { appId: 'app-1', organizationId: 'org-1', serviceTier: 'free' };
    expect(limitSubject(LIMITS.attest, { tenant })).toBe('org-1');
    expect(limitSubject(LIMITS['sdk-feedback-app'], { tenant })).toBe('app-1');
    expect(limitOf(LIMITS.attest, { tenant })).toBe(30);
    expect(limitOf(LIMITS.flags, { tenant: { ...tenant, serviceTier: 'professional' } })).toBe(8_000);
  });

  it('counts the key bucket for API keys only, at the rate of the key organization’s plan', () => {
    const byKey = { organizationId: 'org-1', caller: { kind: 'apiKey', serviceTier: 'basic' } };
    expect(limitSubject(LIMITS.apikey, { auth: byKey })).toBe('org-1');
    expect(limitOf(LIMITS.apikey, { auth: byKey })).toBe(300);
    expect(limitSubject(LIMITS.apikey, { auth: { organizationId: 'org-1', caller: { kind: 'session' } } })).toBeNull();
  });

  it('gives every limit a bucket name the store accepts', () => {
    for (const name of Object.keys(LIMITS)) expect(name).toMatch(/^[a-z0-9][a-z0-9_-]*$/);
  });
});
