import { randomSecret, sha256Hex } from '../common/crypto.js';
import { API_KEY_TYPES, type ApiKeyType } from './api-key.entity.js';

const KEY_PATTERN = new RegExp(`^(${API_KEY_TYPES.join('|')})_[A-Za-z0-9_-]{32,64}$`);

/** A new key: shown once; only its hash and a short visible prefix are stored. */
export function generateApiKey(type: ApiKeyType): { key: string; prefix: string; hash: string } {
  const secret = randomSecret(32);
  const key = `${type}_${secret}`;
  return { key, prefix: `${type}_${secret.slice(0, 8)}`, hash: sha256Hex(key) };
}

/** Whether a Bearer credential has the shape of one of our API keys (aat_, service_, gpat_). */
export function looksLikeApiKey(token: string): boolean {
  return KEY_PATTERN.test(token);
}

export function hashApiKey(key: string): string {
  return sha256Hex(key);
}
