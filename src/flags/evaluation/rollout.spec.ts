import { describe, expect, it } from '@jest/globals';
import { createHash } from 'node:crypto';
import { passesRollout, rolloutBucket, sha256FirstWord } from './rollout.js';
import { ROLLOUT_VECTORS } from './rollout-vectors.js';

describe('rolloutBucket', () => {
  it.each(ROLLOUT_VECTORS)(
    'reproduces the published vector for $flagKey / $deviceId',
    ({ flagKey, deviceId, uint32, bucket }) => {
      const digest = createHash('sha256').update(`${flagKey}:${deviceId}`, 'utf8').digest();
      expect(digest.readUInt32BE(0)).toBe(uint32);
      expect(rolloutBucket(flagKey, deviceId)).toBe(bucket);
    },
  );

  it('publishes between 5 and 8 vectors', () => {
    expect(ROLLOUT_VECTORS.length).toBeGreaterThanOrEqual(5);
    expect(ROLLOUT_VECTORS.length).toBeLessThanOrEqual(8);
  });

  it('is stable for a device and differs between flags', () => {
    const first = rolloutBucket('new-checkout', 'device-001');
    expect(rolloutBucket('new-checkout', 'device-001')).toBe(first);
    expect(rolloutBucket('other-flag', 'device-001')).not.toBe(first);
  });

  it('stays in [0, 100) with at most 3 decimals', () => {
    for (let i = 0; i < 2000; i++) {
      const bucket = rolloutBucket('range', `d-${i}`);
      expect(bucket).toBeGreaterThanOrEqual(0);
      expect(bucket).toBeLessThan(100);
      expect(Math.round(bucket * 1000) / 1000).toBe(bucket);
    }
  });

  it('puts 100,000 devices within 1 percentage point of a 30% rollout', () => {
    let included = 0;
    for (let i = 0; i < 100_000; i++) {
      if (passesRollout(30, () => rolloutBucket('distribution-check', `device-${i}`))) included++;
    }
    expect(Math.abs(included / 1000 - 30)).toBeLessThan(1);
  });
});

describe('sha256FirstWord', () => {
  const reference = (text: string) => createHash('sha256').update(text, 'utf8').digest().readUInt32BE(0);

  it('agrees with node:crypto at every padding boundary, in ASCII and beyond', () => {
    const texts: string[] = [''];
    for (const length of [1, 31, 54, 55, 56, 57, 63, 64, 65, 118, 119, 120, 128, 200, 700, 3000]) {
      texts.push('k'.repeat(length), `${'é'.repeat(length >> 1)}:${'x'.repeat(length >> 1)}`);
    }
    texts.push('設備-42', 'flag:\u{1F600}', 'lone \uD800 surrogate', 'reversed \uDC00\uD800 pair', 'nul\u0000byte');
    for (const text of texts) expect(sha256FirstWord(text)).toBe(reference(text));
  });

  it('agrees with node:crypto on random keys and ids', () => {
    for (let i = 0; i < 2000; i++) {
      const text = `flag_${i % 97}:${Math.random()
        .toString(36)
        .repeat(1 + (i % 7))}${i % 5 === 0 ? 'ü' : ''}`;
      expect(sha256FirstWord(text)).toBe(reference(text));
    }
  });
});

describe('passesRollout', () => {
  it('includes a device when its bucket is below the percentage', () => {
    expect(passesRollout(50.48, () => 50.479)).toBe(true);
    expect(passesRollout(50.479, () => 50.479)).toBe(false);
    expect(passesRollout(0.001, () => 0)).toBe(true);
  });

  it('includes everyone at 100 and no one at 0, without hashing', () => {
    const unreachable = (): number => {
      throw new Error('hashed needlessly');
    };
    expect(passesRollout(100, unreachable)).toBe(true);
    expect(passesRollout(0, unreachable)).toBe(false);
  });

  it('leaves a device without an id out of a partial rollout', () => {
    expect(passesRollout(99.999, () => null)).toBe(false);
    expect(passesRollout(100, () => null)).toBe(true);
  });
});
