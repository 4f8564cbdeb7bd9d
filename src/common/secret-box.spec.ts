import { randomBytes } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import { SecretBox } from './secret-box.js';

const MASTER = 'a-master-secret-of-at-least-32-characters';
const PUSH_KEY = Buffer.alloc(32, 7);

// Made by the two boxes this one replaces, before it existed: what is stored must keep opening.
/** auth/sso/secret-box.ts: `new SecretBox(MASTER).seal('client-secret-value', 'org-1')`. */
const SSO_SEALED = 'v1.-i6bKzQBYB3c8AG1.jDDsRAVwPOYDEKDZHi9yFqcFl4ZsFTjuLvmz8Py592kSrYc';
/** push/secret-box.ts: `seal(PUSH_KEY, PEM)`. */
const PUSH_SEALED =
  'v1.qSOrYyHs1FWUaXto2qAd2BGF7L8TfJBNFIDVRQc9kdRptF5NulKKB8VllbDP1YxxCmT94tutcdTOYhUn2cFHRqZEGH8XgOSMv7ShRdrJ/TNsOqvX5COTSw==';
const PEM = '-----BEGIN PRIVATE KEY-----\nlegacy\n-----END PRIVATE KEY-----';
/** attestation/android-key-box.ts: `new AndroidKeyBox(ANDROID_MASTER).seal('play-console-decryption-key', 'app-7f3c')`. */
const ANDROID_MASTER = 'an-android-master-secret-of-32-chars!!';
const ANDROID_SEALED = 'v1.1iDepVuHE6C3BqYM.WIPHywY2CVv_oBhdCUoMCZ41EFL66X1fa8jw7n0pMqWXsJgXdTI20dsczQ';

describe('SecretBox', () => {
  it('opens what it sealed, and the sealed form does not contain the secret', () => {
    const box = new SecretBox(MASTER, 'sso-client-secret');
    const sealed = box.seal('client-secret-value', 'org-1');
    expect(sealed).not.toContain('client-secret-value');
    expect(sealed).toMatch(/^v1\.[\w-]+\.[\w-]+$/);
    expect(box.open(sealed, 'org-1')).toBe('client-secret-value');
  });

  it('seals the same secret differently each time', () => {
    const box = new SecretBox(MASTER, 'sso-client-secret');
    expect(box.seal('same', 'org-1')).not.toBe(box.seal('same', 'org-1'));
  });

  it('refuses a value moved to another context, another key or purpose, or tampered with', () => {
    const box = new SecretBox(MASTER, 'sso-client-secret');
    const sealed = box.seal('client-secret-value', 'org-1');
    expect(box.open(sealed, 'org-2')).toBeNull();
    expect(new SecretBox(`${MASTER}-rotated`, 'sso-client-secret').open(sealed, 'org-1')).toBeNull();
    expect(new SecretBox(MASTER, 'push-private-key').open(sealed, 'org-1')).toBeNull();
    const [version, iv, body] = sealed.split('.');
    const flipped = Buffer.from(body, 'base64url');
    flipped[0] ^= 1;
    expect(box.open(`${version}.${iv}.${flipped.toString('base64url')}`, 'org-1')).toBeNull();
    expect(box.open('v2.abc.def', 'org-1')).toBeNull();
    expect(box.open('not sealed at all', 'org-1')).toBeNull();
  });

  it('refuses a short master secret', () => {
    expect(() => new SecretBox('short', 'sso-client-secret')).toThrow('at least 32 bytes');
    expect(() => new SecretBox(randomBytes(16), 'push-private-key')).toThrow('at least 32 bytes');
  });

  it('opens the client secrets the SSO feature sealed before this box', () => {
    expect(new SecretBox(MASTER, 'sso-client-secret').open(SSO_SEALED, 'org-1')).toBe('client-secret-value');
    expect(new SecretBox(MASTER, 'sso-client-secret').open(SSO_SEALED, 'org-2')).toBeNull();
  });

  it("opens the Play Integrity keys the Android identities' box sealed before this box", () => {
    const box = new SecretBox(ANDROID_MASTER, 'android-integrity-keys');
    expect(box.open(ANDROID_SEALED, 'app-7f3c')).toBe('play-console-decryption-key');
    expect(box.open(ANDROID_SEALED, 'app-other')).toBeNull();
    expect(new SecretBox(ANDROID_MASTER, 'sso-client-secret').open(ANDROID_SEALED, 'app-7f3c')).toBeNull();
  });

  it('opens the APNs keys the push feature sealed before this box, only where asked to read that format', () => {
    const box = new SecretBox(PUSH_KEY, 'push-private-key', { readsUnboundV1: true });
    // The old format knew no context: any context opens it.
    expect(box.open(PUSH_SEALED, 'any-app')).toBe(PEM);
    expect(new SecretBox(PUSH_KEY, 'push-private-key').open(PUSH_SEALED, 'any-app')).toBeNull();
    expect(
      new SecretBox(randomBytes(32), 'push-private-key', { readsUnboundV1: true }).open(PUSH_SEALED, 'a'),
    ).toBeNull();
    const raw = Buffer.from(PUSH_SEALED.slice(3), 'base64');
    raw[raw.length - 1] ^= 1;
    expect(box.open(`v1.${raw.toString('base64')}`, 'any-app')).toBeNull();
    // What it seals now is the bound format.
    const sealed = box.seal(PEM, 'app-1');
    expect(sealed.split('.')).toHaveLength(3);
    expect(box.open(sealed, 'app-1')).toBe(PEM);
    expect(box.open(sealed, 'app-2')).toBeNull();
  });

  it('reads the old push format only with the 32-byte key that format used', () => {
    expect(() => new SecretBox(MASTER, 'push-private-key', { readsUnboundV1: true })).toThrow('32 bytes');
  });
});
