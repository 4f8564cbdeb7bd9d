import { describe, expect, it } from '@jest/globals';
import { generateKeyPairSync } from 'node:crypto';
import { spkiPem } from './credential-certificate.js';

describe('spkiPem', () => {
  it('writes the PEM node:crypto writes for the same key, byte for byte (one line and several)', () => {
    for (const { publicKey } of [
      generateKeyPairSync('ec', { namedCurve: 'P-256' }),
      generateKeyPairSync('ec', { namedCurve: 'P-384' }),
      generateKeyPairSync('rsa', { modulusLength: 2048 }),
    ]) {
      const der = publicKey.export({ type: 'spki', format: 'der' });
      expect(spkiPem(der)).toBe(publicKey.export({ type: 'spki', format: 'pem' }).toString());
    }
  });
});
