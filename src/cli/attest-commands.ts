import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { isISO8601 } from 'class-validator';
import { createTrustStore, verifyAttestation, type TrustStore } from '../attestation/app-attest/app-attest.js';
import { SigningKeysService } from '../device-tokens/signing-keys.service.js';
import { SigningKeysRepository } from '../device-tokens/signing-keys.repository.js';
import { UnitOfWork } from '../database/unit-of-work.js';
import type { CliArgs } from './cli-args.js';
import { CliError, CliFailureWithOutput, withoutDatabase, type CliContext } from './cli-context.js';

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}(?:==)?|[A-Za-z0-9+/]{3}=?)?$/;
const BASE64URL = /^[A-Za-z0-9_-]+$/;

/** Standard base64 (padding optional) or base64url; whitespace such as line breaks is ignored. */
function readBase64(args: CliArgs, name: string, value = args.required(name)): Buffer {
  const compact = value.replace(/\s+/g, '');
  if (!compact || !(BASE64.test(compact) || BASE64URL.test(compact))) {
    throw new CliError(`--${name} must be base64`);
  }
  return Buffer.from(compact, BASE64.test(compact) ? 'base64' : 'base64url');
}

function readTime(value: string | undefined): Date {
  if (value === undefined) return new Date();
  const time = new Date(value);
  if (!isISO8601(value, { strict: true }) || Number.isNaN(time.getTime())) {
    throw new CliError(`--at must be an ISO-8601 time such as 2024-04-18T12:00:00Z, not "${value}"`);
  }
  return time;
}

async function readTrustStore(path: string): Promise<TrustStore> {
  let pem: string;
  try {
    pem = await readFile(resolve(path), 'utf8');
  } catch {
    throw new CliError(`--root-ca: cannot read ${path}`);
  }
  try {
    return createTrustStore(pem);
  } catch {
    throw new CliError(`--root-ca: ${path} holds no PEM certificate`);
  }
}

/** `--challenge TEXT` is hashed as UTF-8 text (SHA256); `--client-data-hash B64` is used as is. */
function readClientDataHash(args: CliArgs): Buffer {
  const challenge = args.optional('challenge');
  const clientDataHash = args.optional('client-data-hash');
  if ((challenge === undefined) === (clientDataHash === undefined)) {
    throw new CliError('give exactly one of --challenge TEXT or --client-data-hash B64');
  }
  if (challenge !== undefined) {
    if (challenge === '') throw new CliError('--challenge needs a value');
    return createHash('sha256').update(challenge, 'utf8').digest();
  }
  return readBase64(args, 'client-data-hash', clientDataHash);
}

/**
 * attest:verify: verifies an App Attest attestation offline, at `--at` (default now), against
 * `--root-ca` (default APP_ATTEST_ROOT_CA, else Apple's root shipped in the repository). Needs no
 * database. Prints `{valid: true, environment, publicKey}` and exits 0, or prints
 * `{valid: false, errors: [{step, message}]}` on stdout and exits 1 (the step is the service's
 * error code, e.g. `certificate_chain_invalid`). Bad options exit 1 with a message and no JSON.
 */
export const verifyAttestationCommand = withoutDatabase(async (context: CliContext, args: CliArgs) => {
  const attestationObject = readBase64(args, 'attestation');
  const keyId = args.required('key-id');
  const clientDataHash = readClientDataHash(args);
  const teamId = args.required('team-id');
  const bundleId = args.required('bundle-id');
  const now = readTime(args.optional('at'));
  const trustAnchors = await readTrustStore(args.optional('root-ca') ?? context.config.appAttestRootCaPath);
  const result = await verifyAttestation({
    attestationObject,
    keyId,
    clientDataHashes: [clientDataHash],
    teamId,
    bundleId,
    trustAnchors,
    now,
  });
  if (!result.ok) {
    throw new CliFailureWithOutput(`the attestation is invalid at the ${result.code} step: ${result.message}`, {
      valid: false,
      errors: [{ step: result.code, message: result.message }],
    });
  }
  return { valid: true, environment: result.environment, publicKey: result.publicKeyPem };
});

/** The signing keys the server uses, built the way the server builds them (a first key if none exists). */
async function signingKeys(context: CliContext): Promise<SigningKeysService> {
  const uow = new UnitOfWork(await context.dataSource());
  const keys = new SigningKeysService(uow, new SigningKeysRepository(uow), context.config);
  await keys.onModuleInit();
  return keys;
}

/** jwks: the public keys `/.well-known/jwks.json` publishes (current first, then retired ones still in grace). */
export async function printJwks(context: CliContext) {
  return (await signingKeys(context)).jwks();
}

/**
 * jwt:rotate: a fresh RS256 key becomes current; the previous one stays in the JWKS until every
 * token it signed has expired. Running servers pick the new key up within a minute. Refused
 * while JWT_PRIVATE_KEY is set, since the next start would make that key current again.
 */
export async function rotateSigningKey(context: CliContext) {
  if (context.config.jwtPrivateKey) {
    throw new CliError('JWT_PRIVATE_KEY is set: rotate by replacing that variable, not with jwt:rotate');
  }
  const keys = await signingKeys(context);
  const previousKid = (await keys.signingKey()).kid;
  return { kid: await keys.rotate(), previousKid };
}
