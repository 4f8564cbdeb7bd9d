import { randomInt } from 'node:crypto';

/**
 * RFC 8628 §6.1's user-code alphabet: consonants only (no vowels, so no words; no look-alikes
 * such as 0/O and 1/I), upper case, 8 characters (20^8 ≈ 2.6 × 10^10) shown as `BCDF-GHJK`.
 */
const ALPHABET = 'BCDFGHJKLMNPQRSTVWXZ';
const LENGTH = 8;

export function newUserCode(): string {
  let code = '';
  for (let i = 0; i < LENGTH; i++) code += ALPHABET[randomInt(ALPHABET.length)];
  return `${code.slice(0, 4)}-${code.slice(4)}`;
}

export const USER_CODE_FORMAT = /^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/;
