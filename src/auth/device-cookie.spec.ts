import { describe, expect, it } from '@jest/globals';
import {
  DEVICE_COOKIE_MAX_AGE_MS,
  DEVICE_COOKIE_MAX_ACCOUNTS,
  cookieValueOf,
  deviceCookieAfterSignIn,
  deviceCookieKey,
  deviceTokenFor,
  issueDeviceToken,
  readDeviceToken,
} from './device-cookie.js';

const key = deviceCookieKey('a-session-secret-of-at-least-32-characters');
const alice = '3f2b8c1e-0d4a-4b6e-9a7f-1c2d3e4f5a6b';
const bob = '9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d';
const now = new Date('2026-11-26T12:00:00Z');

describe('device cookies', () => {
  it('names the account it was issued for, and no other', () => {
    const cookie = deviceCookieAfterSignIn(key, undefined, alice, now);
    expect(deviceTokenFor(key, cookie, alice, now)).toMatchObject({ userId: alice });
    expect(deviceTokenFor(key, cookie, bob, now)).toBeNull();
  });

  it('refuses a token signed with another secret, tampered with, malformed or too old', () => {
    const token = issueDeviceToken(key, alice, now);
    expect(readDeviceToken(deviceCookieKey('another-session-secret-of-32-characters!'), token, now)).toBeNull();
    const [, nonce, issuedAt, mac] = token.split('.');
    expect(readDeviceToken(key, [bob, nonce, issuedAt, mac].join('.'), now)).toBeNull();
    expect(readDeviceToken(key, [alice, nonce, Number(issuedAt) + 1, mac].join('.'), now)).toBeNull();
    expect(readDeviceToken(key, `${token}.extra`, now)).toBeNull();
    expect(readDeviceToken(key, 'garbage', now)).toBeNull();
    expect(readDeviceToken(key, token, new Date(now.getTime() + DEVICE_COOKIE_MAX_AGE_MS))).toBeNull();
    expect(readDeviceToken(key, token, new Date(now.getTime() + DEVICE_COOKIE_MAX_AGE_MS - 1000))).not.toBeNull();
  });

  it('gives each sign-in a fresh token with its own budget, and remembers a few accounts per browser', () => {
    const first = deviceCookieAfterSignIn(key, undefined, alice, now);
    const second = deviceCookieAfterSignIn(key, first, alice, now);
    expect(deviceTokenFor(key, second, alice, now)!.nonce).not.toBe(deviceTokenFor(key, first, alice, now)!.nonce);
    expect(second.split('~')).toHaveLength(1);
    const both = deviceCookieAfterSignIn(key, second, bob, now);
    expect(deviceTokenFor(key, both, alice, now)).not.toBeNull();
    expect(deviceTokenFor(key, both, bob, now)).not.toBeNull();
    let many = both;
    for (let i = 0; i < 10; i++)
      many = deviceCookieAfterSignIn(key, many, `00000000-0000-4000-8000-00000000000${i % 10}`, now);
    expect(many.split('~')).toHaveLength(DEVICE_COOKIE_MAX_ACCOUNTS);
  });

  it('reads one cookie out of a Cookie header', () => {
    expect(cookieValueOf('a=1; attestly.device=x.y~z; b=2', 'attestly.device')).toBe('x.y~z');
    expect(cookieValueOf('attestly.devices=1', 'attestly.device')).toBeUndefined();
    expect(cookieValueOf(undefined, 'attestly.device')).toBeUndefined();
  });
});
