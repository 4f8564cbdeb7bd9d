import { randomBytes } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import { CHALLENGE_BYTES, stampChallenge, stampedExpiry } from './challenge-stamp.js';

const key = randomBytes(32);
const appId = '4d3c2b1a-0000-4000-8000-000000000001';
const expiry = 1_800_000_000;

describe('challenge stamps', () => {
  it('are 32 base64 bytes that give back their expiry to the same key and app', () => {
    const challenge = stampChallenge(key, appId, expiry);
    expect(Buffer.from(challenge, 'base64')).toHaveLength(CHALLENGE_BYTES);
    expect(stampedExpiry(key, appId, challenge)).toBe(expiry);
  });

  it('differ every time for the same app and expiry', () => {
    const challenges = new Set(Array.from({ length: 100 }, () => stampChallenge(key, appId, expiry)));
    expect(challenges.size).toBe(100);
  });

  it('say nothing for another app, another key, a changed byte, another length or another encoding', () => {
    const challenge = stampChallenge(key, appId, expiry);
    expect(stampedExpiry(key, '4d3c2b1a-0000-4000-8000-000000000002', challenge)).toBeNull();
    expect(stampedExpiry(randomBytes(32), appId, challenge)).toBeNull();
    const bytes = Buffer.from(challenge, 'base64');
    for (const index of [0, 3, 4, 15, 16, 31]) {
      const changed = Buffer.from(bytes);
      changed[index] ^= 0x01;
      expect(stampedExpiry(key, appId, changed.toString('base64'))).toBeNull();
    }
    expect(stampedExpiry(key, appId, bytes.subarray(0, 31).toString('base64'))).toBeNull();
    expect(stampedExpiry(key, appId, bytes.toString('base64url'))).toBeNull();
    expect(stampedExpiry(key, appId, randomBytes(32).toString('base64'))).toBeNull();
    expect(stampedExpiry(key, appId, 'not-issued')).toBeNull();
  });
});
