// The README's table of attestation failure codes is the code's catalog, row for row, and the
// catalog holds every code the attestation endpoints throw.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { APP_ATTEST_ERROR_CODES } from '../../src/attestation/app-attest/app-attest-errors.js';
import { ATTESTATION_FAILURE_CODES } from '../../src/attestation/failure-codes.js';
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

/** `new AppException(<status>, '<code>'` in the attestation endpoints' sources. */
function thrownCodes(): Map<string, number> {
  const files = [
    ...readdirSync(join(root, 'src/attestation'))
      .filter((name) => name.endsWith('.ts') && !name.endsWith('.spec.ts'))
      .map((name) => join(root, 'src/attestation', name)),
    join(root, 'src/usage/usage.exceptions.ts'),
  ];
  const codes = new Map<string, number>();
  for (const file of files) {
    for (const [, status, code] of readFileSync(file, 'utf8').matchAll(/new AppException\(\s*(\d+),\s*'([a-z_]+)'/g)) {
      codes.set(code, Number(status));
    }
  }
  return codes;
}

/** Codes of the dashboard's debug-token routes, not of the attestation endpoints. */
const DASHBOARD_CODES = new Set(['debug_token_limit_reached']);

describe('attestation failure codes', () => {
  it('are listed in the README exactly as the catalog has them', () => {
    const catalog = Object.entries(ATTESTATION_FAILURE_CODES).map(([code, entry]) => ({ code, ...entry }));
    expect(readmeRows()).toEqual(catalog);
  });

  it('include every App Attest verification step and every code the attestation endpoints throw', () => {
    const catalogued = new Set(Object.keys(ATTESTATION_FAILURE_CODES));
    for (const code of APP_ATTEST_ERROR_CODES) expect(catalogued).toContain(code);
    // Every Play Integrity step, answered with the status the catalog gives it.
    for (const code of PLAY_INTEGRITY_ERROR_CODES) {
      expect([code, ATTESTATION_FAILURE_CODES[code]?.status]).toEqual([code, integrityStatus(code)]);
    }
    const thrown = thrownCodes();
    expect(thrown.size).toBeGreaterThan(10);
    for (const [code, status] of thrown) {
      if (DASHBOARD_CODES.has(code)) continue;
      expect([code, ATTESTATION_FAILURE_CODES[code as keyof typeof ATTESTATION_FAILURE_CODES]?.status]).toEqual([
        code,
        status,
      ]);
    }
  });
});
