import { describe, expect, it } from '@jest/globals';
import { SecretBox } from './secret-box.js';

const MASTER = 'a-master-secret-of-at-least-32-characters';

describe('SecretBox', () => {
  it('opens what it sealed, and the sealed form does not contain the secret', () => {
    const box = new SecretBox(MASTER);
    const sealed = box.seal('client-secret-value', 'org-1');
    expect(sealed).not.toContain('client-secret-value');
    expect(sealed).toMatch(/^v1\.[\w-]+\.[\w-]+$/);
    expect(box.open(sealed, 'org-1')).toBe('client-secret-value');
  });

  it('seals the same secret differently each time', () => {
    const box = new SecretBox(MASTER);
    expect(box.seal('same', 'org-1')).not.toBe(box.seal('same', 'org-1'));
  });

  it('refuses a value moved to another context, another key, or tampered with', () => {
    const box = new SecretBox(MASTER);
    const sealed = box.seal('client-secret-value', 'org-1');
    expect(box.open(sealed, 'org-2')).toBeNull();
    expect(new SecretBox(`${MASTER}-rotated`).open(sealed, 'org-1')).toBeNull();
    const [version, iv, body] = sealed.split('.');
    const flipped = Buffer.from(body, 'base64url');
    flipped[0] ^= 1;
    expect(box.open(`${version}.${iv}.${flipped.toString('base64url')}`, 'org-1')).toBeNull();
    expect(box.open('v2.abc.def', 'org-1')).toBeNull();
    expect(box.open('not sealed at all', 'org-1')).toBeNull();
  });

  it('refuses a short master secret', () => {
    expect(() => new SecretBox('short')).toThrow('at least 32 characters');
  });
});
