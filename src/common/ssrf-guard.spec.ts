import { describe, expect, it } from '@jest/globals';
import { UnsafeUrlError, assertPublicUrl, isPublicAddress } from './ssrf-guard.js';

const strict = { allowPrivateNetworks: false };
const relaxed = { allowPrivateNetworks: true };

async function refusal(url: string, options = strict): Promise<UnsafeUrlError> {
  try {
    await assertPublicUrl(url, options);
  } catch (error) {
    if (error instanceof UnsafeUrlError) return error;
    throw error;
  }
  throw new Error(`${url} was accepted`);
}

describe('isPublicAddress', () => {
  it.each(['8.8.8.8', '1.1.1.1', '93.184.216.34', '2606:4700:4700::1111', '2a00:1450:4001:82b::200e'])(
    'admits %s',
    (ip) => {
      expect(isPublicAddress(ip)).toBe(true);
    },
  );

  it.each([
    ['127.0.0.1', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['192.168.1.1', 'private'],
    ['169.254.169.254', 'link-local (cloud metadata)'],
    ['100.64.0.1', 'carrier-grade NAT'],
    ['0.0.0.0', 'unspecified'],
    ['224.0.0.1', 'multicast'],
    ['255.255.255.255', 'broadcast'],
    ['192.0.2.1', 'documentation'],
    ['::1', 'loopback'],
    ['::', 'unspecified'],
    ['fc00::1', 'unique local'],
    ['fd12:3456::1', 'unique local'],
    ['fe80::1', 'link-local'],
    ['ff02::1', 'multicast'],
    ['::ffff:127.0.0.1', 'IPv4-mapped loopback'],
    ['::ffff:10.0.0.1', 'IPv4-mapped private'],
    ['64:ff9b::a00:1', 'NAT64'],
    ['2002:a00:1::', '6to4'],
    ['not an ip', 'garbage'],
  ])('refuses %s (%s)', (ip) => {
    expect(isPublicAddress(ip)).toBe(false);
  });
});

describe('assertPublicUrl', () => {
  it.each([
    ['https://127.0.0.1/hook'],
    ['https://10.0.0.8/hook'],
    ['https://169.254.169.254/latest/meta-data'],
    ['https://[::1]/hook'],
    ['https://[fc00::1]/hook'],
    ['https://[::ffff:192.168.0.1]/hook'],
    // IPv6 forms that carry an internal IPv4 address.
    ['https://[::127.0.0.1]/hook'],
    ['https://[::a9fe:a9fe]/latest/meta-data'],
    ['https://[::10.0.0.1]/hook'],
    ['https://[::ffff:0:7f00:1]/hook'],
    ['https://[2002:7f00:1::1]/hook'],
    ['https://[2002:a9fe:a9fe::1]/hook'],
    ['https://[64:ff9b::7f00:1]/hook'],
    ['https://[64:ff9b:1::a00:1]/hook'],
    ['https://[2001:0:4136:e378:8000:63bf:80ff:fffe]/hook'],
    ['https://0x7f.1/hook'],
    ['https://localhost:8443/hook'],
  ])('refuses %s', async (url) => {
    expect((await refusal(url)).reason).toBe('non_public_address');
  });

  it('says one sentence for every refusal, so it reveals nothing about internal DNS', async () => {
    const refusals = await Promise.all(
      ['https://localhost/', 'https://no-such-host.invalid/', 'https://[::1]/', 'http://8.8.8.8/', 'not a url'].map(
        (url) => refusal(url),
      ),
    );
    expect(new Set(refusals.map((error) => error.message))).toEqual(
      new Set(['URL must be an https URL of a publicly reachable host']),
    );
    expect(refusals.map((error) => error.reason)).toEqual([
      'non_public_address',
      'unresolvable_host',
      'non_public_address',
      'scheme_not_allowed',
      'invalid_url',
    ]);
  });

  it('refuses plain http unless private networks are allowed', async () => {
    expect((await refusal('http://8.8.8.8/')).reason).toBe('scheme_not_allowed');
    await expect(assertPublicUrl('http://127.0.0.1:8080/', relaxed)).resolves.toEqual({
      address: '127.0.0.1',
      family: 4,
    });
  });

  it('refuses other schemes and malformed URLs in every mode', async () => {
    expect((await refusal('ftp://example.com/', relaxed)).reason).toBe('scheme_not_allowed');
    expect((await refusal('file:///etc/passwd', relaxed)).reason).toBe('scheme_not_allowed');
    expect((await refusal('not a url', relaxed)).reason).toBe('invalid_url');
  });

  it('reports hosts that do not resolve', async () => {
    expect((await refusal('https://does-not-exist.invalid/')).reason).toBe('unresolvable_host');
  });

  it('returns the address to connect to', async () => {
    await expect(assertPublicUrl('https://8.8.8.8/', strict)).resolves.toEqual({ address: '8.8.8.8', family: 4 });
    await expect(assertPublicUrl('https://[::1]:9/', relaxed)).resolves.toEqual({ address: '::1', family: 6 });
  });
});
