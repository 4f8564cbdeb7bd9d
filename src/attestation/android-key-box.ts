import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

const VERSION = 'v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;

/**
 * AES-256-GCM for an app's Play Integrity keys at rest, in the form of the SSO client secrets'
 * box (src/auth/sso/secret-box.ts, which attestation may not import: auth depends on
 * attestation): a key derived with HKDF from a master secret for this use only, and the app id
 * authenticated with the ciphertext, so a value copied to another app's row does not open.
 * Pure: no I/O.
 */
export class AndroidKeyBox {
  private readonly key: Buffer;

  constructor(masterSecret: string) {
    if (masterSecret.length < 32) throw new Error('the master secret must be at least 32 characters');
    this.key = Buffer.from(hkdfSync('sha256', masterSecret, 'attestly', 'android-integrity-keys', 32));
  }

  seal(plaintext: string, context: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(Buffer.from(context));
    const sealed = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final(), cipher.getAuthTag()]);
    return `${VERSION}.${iv.toString('base64url')}.${sealed.toString('base64url')}`;
  }

  /** The plaintext, or null when the value was not sealed by this key for this context. */
  open(sealed: string, context: string): string | null {
    const [version, ivText, bodyText, ...rest] = sealed.split('.');
    if (version !== VERSION || !ivText || !bodyText || rest.length) return null;
    const iv = Buffer.from(ivText, 'base64url');
    const body = Buffer.from(bodyText, 'base64url');
    if (iv.length !== IV_BYTES || body.length < TAG_BYTES) return null;
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.key, iv);
      decipher.setAAD(Buffer.from(context));
      decipher.setAuthTag(body.subarray(body.length - TAG_BYTES));
      return Buffer.concat([decipher.update(body.subarray(0, body.length - TAG_BYTES)), decipher.final()]).toString(
        'utf8',
      );
    } catch {
      return null;
    }
  }
}
