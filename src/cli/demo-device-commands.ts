import { createPrivateKey } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type * as Fabricator from '../../tools/app-attest-fabricator/fabricator.js';
import type * as AndroidFabricator from '../../tools/play-integrity-fabricator/fabricator.js';
import type { CliArgs } from './cli-args.js';
import { CliError, withoutDatabase, type CliContext } from './cli-context.js';

/**
 * The fabricator is a development tool: the development build compiles tools/ into dist/tools, the
 * production build (the Docker image) leaves it out, where these commands say so.
 */
async function fabricator(): Promise<typeof Fabricator> {
  try {
    return await import('../../tools/app-attest-fabricator/fabricator.js');
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code !== 'ERR_MODULE_NOT_FOUND' || !String(error).includes('app-attest-fabricator')) throw error;
    throw new CliError(
      'the App Attest demo commands are development tools, not part of a production build: run them from a development install (npm ci, then npm run cli)',
    );
  }
}

/**
 * A made-up App Attest authority kept in DATA_DIR, for trying the service without an iPhone:
 * start the server with APP_ATTEST_ROOT_CA pointing at `rootCaPath`, then fabricate devices.
 */
async function demoAuthority(context: CliContext) {
  const directory = join(context.config.dataDir, 'demo-app-attest');
  mkdirSync(context.config.dataDir, { recursive: true });
  mkdirSync(directory, { recursive: true, mode: 0o700 });
  const authority = await (await fabricator()).persistentAppAttestAuthority(join(directory, 'authority.json'));
  const rootCaPath = join(directory, 'root.pem');
  writeFileSync(rootCaPath, authority.rootPem);
  return { authority, rootCaPath };
}

/** attest:demo-root: creates (once) the demo authority and prints where its root certificate is. */
export const demoRootCommand = withoutDatabase(async (context: CliContext) => {
  const { rootCaPath } = await demoAuthority(context);
  return { rootCaPath };
});

/** attest:fabricate: a fabricated attestation for a challenge, as an iPhone's App Attest makes one. */
export const fabricateAttestationCommand = withoutDatabase(async (context: CliContext, args: CliArgs) => {
  const challenge = args.required('challenge');
  const teamId = args.required('team-id');
  const bundleId = args.required('bundle-id');
  const environment = args.optional('environment') ?? 'production';
  if (environment !== 'production' && environment !== 'development') {
    throw new CliError('--environment must be production or development');
  }
  const { authority, rootCaPath } = await demoAuthority(context);
  const device = authority.createDevice();
  return {
    keyId: device.keyId,
    attestationObject: await device.attest({ challenge, teamId, bundleId, environment }),
    devicePrivateKeyPem: device.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    rootCaPath,
  };
});

/** attest:assert: an assertion by a fabricated device's key, for POST /api/v1/attestation/refresh. */
export const fabricateAssertionCommand = withoutDatabase(async (context: CliContext, args: CliArgs) => {
  const keyFile = args.required('key-file');
  const counter = Number(args.required('counter'));
  if (!Number.isSafeInteger(counter) || counter < 1) throw new CliError('--counter must be a positive integer');
  let pem: string;
  try {
    pem = readFileSync(keyFile, 'utf8');
  } catch {
    throw new CliError(`--key-file ${keyFile} cannot be read`);
  }
  const { authority } = await demoAuthority(context);
  const device = authority.createDevice(createPrivateKey(pem));
  return {
    keyId: device.keyId,
    assertion: device.assert({
      challenge: args.required('challenge'),
      counter,
      teamId: args.required('team-id'),
      bundleId: args.required('bundle-id'),
    }),
  };
});

/** The Play Integrity fabricator, loaded on demand like the App Attest one (development builds only). */
async function androidFabricator(): Promise<typeof AndroidFabricator> {
  try {
    return await import('../../tools/play-integrity-fabricator/fabricator.js');
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code !== 'ERR_MODULE_NOT_FOUND' || !String(error).includes('play-integrity-fabricator')) throw error;
    throw new CliError(
      'the Play Integrity demo commands are development tools, not part of a production build: run them from a development install (npm ci, then npm run cli)',
    );
  }
}

const PACKAGE_NAME = /^[A-Za-z][A-Za-z0-9_]*(\.[A-Za-z][A-Za-z0-9_]*)+$/;

/** A made-up Android app's keys, kept in DATA_DIR/demo-play-integrity/<package>.json. */
async function demoAndroidApp(context: CliContext, packageName: string) {
  if (!PACKAGE_NAME.test(packageName) || packageName.length > 150) {
    throw new CliError('--package must be an Android application id such as com.example.app');
  }
  const directory = join(context.config.dataDir, 'demo-play-integrity');
  mkdirSync(context.config.dataDir, { recursive: true });
  mkdirSync(directory, { recursive: true, mode: 0o700 });
  const keysPath = join(directory, `${packageName}.json`);
  return { app: (await androidFabricator()).persistentAndroidApp(keysPath, packageName), keysPath };
}

/**
 * attest:android-app: creates (once per package) a made-up app's Play Integrity keys and signing
 * certificate, and prints the body of PUT /api/v1/apps/:appID/android that sets them.
 */
export const androidAppCommand = withoutDatabase(async (context: CliContext, args: CliArgs) => {
  const { app, keysPath } = await demoAndroidApp(context, args.required('package'));
  return {
    androidSettings: {
      packageName: app.packageName,
      certificateSha256Digests: [app.certificateSha256Digest],
      decryptionKey: app.decryptionKeyBase64,
      verificationKey: app.verificationKeyBase64,
    },
    keysPath,
  };
});

const DEVICE_LABELS = new Set(['MEETS_STRONG_INTEGRITY', 'MEETS_DEVICE_INTEGRITY', 'MEETS_BASIC_INTEGRITY']);
const APP_VERDICTS = ['PLAY_RECOGNIZED', 'UNRECOGNIZED_VERSION', 'UNEVALUATED'] as const;
const LICENSING = ['LICENSED', 'UNLICENSED', 'UNEVALUATED'] as const;

/**
 * attest:android-token: an integrity token for a challenge, as Play's servers make one for the
 * demo app, with the chosen device labels (`--verdict`, comma-separated; `none` for no label),
 * app recognition and licensing.
 */
export const androidTokenCommand = withoutDatabase(async (context: CliContext, args: CliArgs) => {
  const challenge = args.required('challenge');
  const { app } = await demoAndroidApp(context, args.required('package'));
  const verdict = args.optional('verdict') ?? 'MEETS_DEVICE_INTEGRITY,MEETS_BASIC_INTEGRITY';
  const deviceVerdicts = verdict === 'none' ? [] : verdict.split(',').map((label) => label.trim());
  const unknown = deviceVerdicts.filter((label) => !DEVICE_LABELS.has(label));
  if (unknown.length) {
    throw new CliError(`--verdict: ${unknown.join(', ')} is not one of ${[...DEVICE_LABELS].join(', ')} (or none)`);
  }
  const appVerdict = args.optional('app-verdict') ?? 'PLAY_RECOGNIZED';
  if (!(APP_VERDICTS as readonly string[]).includes(appVerdict)) {
    throw new CliError(`--app-verdict must be one of ${APP_VERDICTS.join(', ')}`);
  }
  const licensing = args.optional('licensing') ?? 'LICENSED';
  if (!(LICENSING as readonly string[]).includes(licensing)) {
    throw new CliError(`--licensing must be one of ${LICENSING.join(', ')}`);
  }
  return {
    integrityToken: await app.mint({
      challenge,
      deviceVerdicts,
      appRecognitionVerdict: appVerdict as (typeof APP_VERDICTS)[number],
      appLicensingVerdict: licensing as (typeof LICENSING)[number],
    }),
    requestHash: (await androidFabricator()).fabricatedRequestHash(challenge),
  };
});
