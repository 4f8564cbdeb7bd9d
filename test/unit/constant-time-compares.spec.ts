// Presented secrets are compared in constant time (DESIGN.md 8). Timing cannot be asserted
// reliably in a test, so this shows the two halves: safeEqual is a constant-time comparison, and
// no source file compares a signature, secret, token or hash with === or !==.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { safeEqual } from '../../src/common/crypto.js';

const root = new URL('../..', import.meta.url).pathname;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return path.endsWith('.ts') && !path.endsWith('.spec.ts') && !path.endsWith('.d.ts') ? [path] : [];
  });
}

/** An operand naming a secret the service checks what a caller presents against. */
const SECRET = /(signature|secret|csrf|token|hash|apikey)/i;
/** Comparisons that are about presence or type, not content. */
const HARMLESS = /^(.*\.length|null|undefined|'[^']*'|"[^"]*"|\d+)$/;

function secretComparisons(source: string): string[] {
  const found: string[] = [];
  const operand = `('[^']*'|"[^"]*"|[\\w.$[\\]?]+)`;
  const comparison = new RegExp(`${operand}\\s*(===|!==)\\s*${operand}`, 'g');
  for (const line of source.split('\n')) {
    if (/^\s*(\/\/|\*)/.test(line)) continue;
    for (const [, left, , right] of line.matchAll(comparison)) {
      const operands = [left.trim(), right.trim()];
      if (operands.some((operand) => HARMLESS.test(operand))) continue;
      if (operands.some((operand) => SECRET.test(operand))) found.push(line.trim());
    }
  }
  return found;
}

describe('constant-time comparison of presented secrets', () => {
  it('safeEqual tells equal from unequal strings of any length', () => {
    expect(safeEqual('sha256=abc', 'sha256=abc')).toBe(true);
    expect(safeEqual('sha256=abc', 'sha256=abd')).toBe(false);
    expect(safeEqual('sha256=abc', 'sha256=ab')).toBe(false);
    expect(safeEqual('', '')).toBe(true);
    expect(safeEqual('é', 'e\u0301')).toBe(false);
  });

  it('checks the metrics token and device-login form tokens with safeEqual (Stripe signatures: the Stripe SDK)', () => {
    for (const file of ['src/metrics/metrics.controller.ts', 'src/auth/device-login/device-login.service.ts']) {
      expect(`${file}: ${/\bsafeEqual\(/.test(readFileSync(join(root, file), 'utf8'))}`).toBe(`${file}: true`);
    }
  });

  it('compares no signature, secret, token or hash with === or !== anywhere in src', () => {
    const offenders = sourceFiles(join(root, 'src')).flatMap((file) =>
      secretComparisons(readFileSync(file, 'utf8')).map((line) => `${relative(root, file)}: ${line}`),
    );
    expect(offenders).toEqual([]);
  });

  it('would notice such a comparison', () => {
    expect(secretComparisons('if (signature === expected) return true;')).toHaveLength(1);
    expect(secretComparisons('return presented !== row.tokenHash;')).toHaveLength(1);
    expect(secretComparisons("if (typeof token !== 'string' || token === '') throw x;")).toEqual([]);
    expect(secretComparisons("if (typeof token !== 'string' || token === stored) throw x;")).toHaveLength(1);
  });
});
