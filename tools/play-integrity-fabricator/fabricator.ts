// Test, benchmark and demo tooling, outside the service (src/ may not import it, bar the CLI's demo
// commands): it signs with keys it makes up.
// Fabricates Google Play Integrity tokens as Play's servers make them for an app whose responses
// are decrypted locally: a JWE (A256KW, A256GCM) under the app's AES-256 key around a JWS (ES256)
// signed with the app's EC P-256 key. The app's keys are made up here and handed to the service as
// an app's Android settings, exactly as a developer pastes them from Play Console.
//
//   const app = fabricateAndroidApp('com.acme.android');
//   const token = await app.mint({ challenge });                  // a device meeting device integrity
//   const bad = await app.mint({ challenge, deviceVerdicts: [] }); // each field can be broken
import {
  createHash,
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  randomBytes,
  type KeyObject,
} from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { CompactEncrypt, CompactSign } from 'jose';

export interface MintOptions {
  /** The challenge the verdict is bound to (request hash of a standard request, or the classic nonce). */
  challenge: string;
  kind?: 'standard' | 'classic';
  /** Overrides the bound value itself (a hash of something else). */
  requestHash?: string;
  nonce?: string;
  requestPackageName?: string;
  packageName?: string;
  certificateSha256Digest?: string[];
  appRecognitionVerdict?: 'PLAY_RECOGNIZED' | 'UNRECOGNIZED_VERSION' | 'UNEVALUATED';
  deviceVerdicts?: string[];
  appLicensingVerdict?: 'LICENSED' | 'UNLICENSED' | 'UNEVALUATED';
  timestampMillis?: number;
  versionCode?: string;
  /** Sign with another key (a forged verdict) or another algorithm's key. */
  signingKey?: KeyObject;
  signingAlgorithm?: string;
  /** Encrypt under another AES key (another app's token). */
  encryptionKey?: Uint8Array;
  /** Replaces the JWS inside (a payload that is not a verdict). */
  rawPayload?: string;
  /** Signs this text instead of the verdict (a signed payload that is not a verdict). */
  signedText?: string;
}

export interface FabricatedAndroidApp {
  readonly packageName: string;
  /** SHA-256 of the made-up signing certificate, base64url as Play reports it. */
  readonly certificateSha256Digest: string;
  /** As Play Console shows them: base64 of the AES-256 key, base64 of the DER SPKI of the EC key. */
  readonly decryptionKeyBase64: string;
  readonly verificationKeyBase64: string;
  mint(options: MintOptions): Promise<string>;
}

/** The request hash an app sends for a challenge (the service's rule: base64url SHA-256 of the string). */
export function fabricatedRequestHash(challenge: string): string {
  return createHash('sha256').update(challenge, 'utf8').digest('base64url');
}

export function fabricateAndroidApp(packageName: string): FabricatedAndroidApp {
  const aesKey = new Uint8Array(randomBytes(32));
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const certificateSha256Digest = createHash('sha256').update(randomBytes(64)).digest('base64url');
  return androidAppOf(packageName, aesKey, privateKey, certificateSha256Digest);
}

/** What a persistent fabricated app keeps on disk (the demo CLI's DATA_DIR). */
interface SavedAndroidApp {
  packageName: string;
  aesKeyBase64: string;
  signingKeyPem: string;
  certificateSha256Digest: string;
}

/**
 * A fabricated app kept in `file`: made up the first time, read back after, so the keys pasted
 * into the app's Android settings keep verifying the tokens minted later.
 */
export function persistentAndroidApp(file: string, packageName: string): FabricatedAndroidApp {
  if (existsSync(file)) {
    const saved = JSON.parse(readFileSync(file, 'utf8')) as SavedAndroidApp;
    if (saved.packageName === packageName) {
      return androidAppOf(
        saved.packageName,
        new Uint8Array(Buffer.from(saved.aesKeyBase64, 'base64')),
        createPrivateKey(saved.signingKeyPem),
        saved.certificateSha256Digest,
      );
    }
  }
  const aesKey = new Uint8Array(randomBytes(32));
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const certificateSha256Digest = createHash('sha256').update(randomBytes(64)).digest('base64url');
  const saved: SavedAndroidApp = {
    packageName,
    aesKeyBase64: Buffer.from(aesKey).toString('base64'),
    signingKeyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    certificateSha256Digest,
  };
  writeFileSync(file, JSON.stringify(saved), { mode: 0o600 });
  return androidAppOf(packageName, aesKey, privateKey, certificateSha256Digest);
}

function androidAppOf(
  packageName: string,
  aesKey: Uint8Array,
  privateKey: KeyObject,
  certificateSha256Digest: string,
): FabricatedAndroidApp {
  const publicKey = createPublicKey(privateKey);
  return {
    packageName,
    certificateSha256Digest,
    decryptionKeyBase64: Buffer.from(aesKey).toString('base64'),
    verificationKeyBase64: publicKey.export({ format: 'der', type: 'spki' }).toString('base64'),
    async mint(options: MintOptions): Promise<string> {
      const kind = options.kind ?? 'standard';
      const requestDetails: Record<string, unknown> = {
        requestPackageName: options.requestPackageName ?? packageName,
        timestampMillis: String(options.timestampMillis ?? Date.now()),
      };
      if (kind === 'standard')
        requestDetails.requestHash = options.requestHash ?? fabricatedRequestHash(options.challenge);
      else requestDetails.nonce = options.nonce ?? Buffer.from(options.challenge, 'base64').toString('base64url');
      const verdict = {
        requestDetails,
        appIntegrity: {
          appRecognitionVerdict: options.appRecognitionVerdict ?? 'PLAY_RECOGNIZED',
          packageName: options.packageName ?? packageName,
          certificateSha256Digest: options.certificateSha256Digest ?? [certificateSha256Digest],
          versionCode: options.versionCode ?? '42',
        },
        deviceIntegrity: { deviceRecognitionVerdict: options.deviceVerdicts ?? ['MEETS_DEVICE_INTEGRITY'] },
        accountDetails: { appLicensingVerdict: options.appLicensingVerdict ?? 'LICENSED' },
      };
      const jws =
        options.rawPayload ??
        (await new CompactSign(new TextEncoder().encode(options.signedText ?? JSON.stringify(verdict)))
          .setProtectedHeader({ alg: options.signingAlgorithm ?? 'ES256' })
          .sign(options.signingKey ?? privateKey));
      return new CompactEncrypt(new TextEncoder().encode(jws))
        .setProtectedHeader({ alg: 'A256KW', enc: 'A256GCM' })
        .encrypt(options.encryptionKey ?? aesKey);
    },
  };
}
