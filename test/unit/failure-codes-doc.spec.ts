// The README's table of attestation failure codes is the code's catalog, row for row, and the
// refusals are built from the catalog (their code is typed as a catalog code, their status read
// from it); usage's quota refusal, which attestation cannot build (usage is below it), agrees.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { APP_ATTEST_ERROR_CODES } from '../../src/attestation/app-attest/app-attest-errors.js';
import {
  attestationFailure,
  challengeInvalid,
  debugTokenRevoked,
  keyTooOld,
} from '../../src/attestation/attestation.exceptions.js';
import {
  ATTESTATION_FAILURE_CODES,
  attestationRefusal,
  type AttestationFailureCode,
} from '../../src/attestation/failure-codes.js';
import { quotaExceeded } from '../../src/usage/usage.exceptions.js';
import { integrityStatus } from '../../src/attestation/android-attestation.exceptions.js';
import { PLAY_INTEGRITY_ERROR_CODES } from '../../src/attestation/play-integrity/play-integrity.js';

const root = new URL('../..', import.meta.url).pathname;
const readme = readFileSync(join(root, 'README.md'), 'utf8');

function readmeRows(): { code: string; status: number; counted: boolean; advice: string }[] {
  const section = /<!-- failure-codes:start -->([\s\S]*?)<!-- failure-codes:end -->/.exec(readme);
  if (!section) throw new Error('README has no failure-codes section');
  return section[1]
    .split('\n')
    .filter((line) => line.startsWith('| `'))
    .map((line) => {
      const [, code, status, counted, advice] = line.split('|').map((cell) => cell.trim());
      return { code: code.replace(/`/g, ''), status: Number(status), counted: counted === 'yes', advice };
    });
}

describe('attestation failure codes', () => {
  it('are listed in the README exactly as the catalog has them', () => {
    const catalog = Object.entries(ATTESTATION_FAILURE_CODES).map(([code, { status, counted, advice }]) => ({
      code,
      status,
      counted,
      advice,
    }));
    expect(readmeRows()).toEqual(catalog);
  });

  it('include every App Attest verification step', () => {
    const catalogued = new Set(Object.keys(ATTESTATION_FAILURE_CODES));
    for (const code of APP_ATTEST_ERROR_CODES) expect(catalogued).toContain(code);
    // Every Play Integrity step, answered with the status the catalog gives it.
    for (const code of PLAY_INTEGRITY_ERROR_CODES) {
      expect([code, ATTESTATION_FAILURE_CODES[code]?.status]).toEqual([code, integrityStatus(code)]);
    }
  });

  it('give every refusal its status, and its message and hint unless the refusal names its own', () => {
    for (const [code, entry] of Object.entries(ATTESTATION_FAILURE_CODES)) {
      const refusal = attestationRefusal(code as AttestationFailureCode);
      expect([code, refusal.getStatus(), refusal.code]).toEqual([code, entry.status, code]);
      if (entry.message) expect(refusal.message).toBe(entry.message);
      expect(refusal.details.hint).toBe(entry.hint);
    }
    expect(challengeInvalid()).toMatchObject({
      code: 'challenge_invalid',
      message: ATTESTATION_FAILURE_CODES.challenge_invalid.message,
      details: { hint: ATTESTATION_FAILURE_CODES.challenge_invalid.hint },
    });
    expect(debugTokenRevoked().getStatus()).toBe(401);
    expect(attestationFailure('invalid_cbor', 'not CBOR').getStatus()).toBe(400);
    expect(attestationFailure('nonce_mismatch', 'other nonce')).toMatchObject({
      message: 'other nonce',
      details: { hint: 'Verification failed at the nonce mismatch step' },
    });
    expect(keyTooOld(30)).toMatchObject({
      code: 'reattest_required',
      message: "This key is older than the app's limit of 30 days",
    });
  });

  it("agree with usage's quota refusal, the one attestation cannot build", () => {
    const refusal = quotaExceeded(10, 10, 'https://example.test/billing');
    expect([refusal.code, refusal.getStatus()]).toEqual([
      'quota_exceeded',
      ATTESTATION_FAILURE_CODES.quota_exceeded.status,
    ]);
  });
});
