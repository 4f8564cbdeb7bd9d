import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

const VERSION = 'v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;
const KEY_BYTES = 32;

/** A master secret shorter than this is refused: it would be guessable. */
export const MIN_MASTER_SECRET_BYTES = 32;

/**
 * AES-256-GCM for the secrets the service must read back (an identity provider's client secret, an
 * APNs signing key): the one secret box of the service.
 *
 * The key is derived from the master secret with HKDF-SHA256 (salt `attestly`, info `purpose`), so
 * the master secret's format does not matter and each use of it gets its own key. `context` (the
 * row's owner: the organization id, the app id) is authenticated with the ciphertext: a value
 * copied to another row does not open.
 *
 * Sealed format, versioned by its first part:
 * - `v1.<iv>.<ciphertext ‖ tag>`, both base64url: what `seal` writes.
 * - `v1.<base64(iv ‖ tag ‖ ciphertext)>`: the push feature's first format (the master secret itself
 *   the AES key, no derivation, no context). Read only, by a box made with `readsUnboundV1`, so
 *   that APNs keys stored before this box keep opening; a key uploaded again is stored in the
 *   format above.
 */
export class SecretBox {
  private readonly key: Buffer;
  /** The key of the unbound format, when the box reads it. */
  private readonly unboundKey: Buffer | null;

  constructor(masterSecret: string | Buffer, purpose: string, options: { readsUnboundV1?: boolean } = {}) {
    if (Buffer.byteLength(masterSecret) < MIN_MASTER_SECRET_BYTES) {
      throw new Error(`the master secret must be at least ${MIN_MASTER_SECRET_BYTES} bytes`);
    }
    this.key = Buffer.from(hkdfSync('sha256', masterSecret, 'attestly', purpose, KEY_BYTES));
    if (options.readsUnboundV1 && !(Buffer.isBuffer(masterSecret) && masterSecret.length === KEY_BYTES)) {
      throw new Error(`the unbound format's key is ${KEY_BYTES} bytes`);
    }
    this.unboundKey = options.readsUnboundV1 ? Buffer.from(masterSecret) : null;
  }

  seal(plaintext: string, context: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(Buffer.from(context));
    const sealed = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final(), cipher.getAuthTag()]);
    return `${VERSION}.${iv.toString('base64url')}.${sealed.toString('base64url')}`;
  }

  /** The plaintext, or null when the value was not sealed by this box for this context. */
  open(sealed: string, context: string): string | null {
    const [version, ...parts] = sealed.split('.');
    if (version !== VERSION) return null;
    if (parts.length === 2) {
      const iv = Buffer.from(parts[0], 'base64url');
      const body = Buffer.from(parts[1], 'base64url');
      if (iv.length !== IV_BYTES || body.length < TAG_BYTES) return null;
      return decrypt(
        this.key,
        iv,
        body.subarray(body.length - TAG_BYTES),
        body.subarray(0, body.length - TAG_BYTES),
        context,
      );
    }
    if (parts.length === 1 && this.unboundKey && parts[0]) {
      const raw = Buffer.from(parts[0], 'base64');
      if (raw.length < IV_BYTES + TAG_BYTES) return null;
      const tag = raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES);
      return decrypt(this.unboundKey, raw.subarray(0, IV_BYTES), tag, raw.subarray(IV_BYTES + TAG_BYTES), null);
    }
    return null;
  }
}

function decrypt(key: Buffer, iv: Buffer, tag: Buffer, ciphertext: Buffer, context: string | null): string | null {
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, iv);
    if (context !== null) decipher.setAAD(Buffer.from(context));
    decipher.setAuthTag(tag);
    return Buffer.concat([decipher.update(ciphertext), decipher.final()]).toString('utf8');
  } catch {
    return null;
  }
}
