import { execFile } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Decoder } from 'cbor-x';
import { startTestApp, type TestApp } from '../harness/test-app.js';
import { appAttestAuthority, type FabricatedAuthority } from '../support/app-attest-fabricator.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const CLI = fileURLToPath(new URL('../../dist/src/cli/main.js', import.meta.url));
const VECTORS = join(ROOT, 'test/fixtures/appattest');
const DAY_MS = 86_400_000;

interface AttestationVector {
  id: string;
  keyId: string;
  attestationObject: string;
  challenge: { encoding: 'utf8' | 'hex' | 'base64'; value: string };
  clientDataHashDerivation: 'sha256' | 'raw';
  clientDataHash: string;
  teamId: string;
  bundleId: string;
  environment: 'development' | 'production';
  validAt: string;
  expectedPublicKeyPem?: string;
}

interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

const vectors: AttestationVector[] = readdirSync(VECTORS)
  .filter((name) => name.endsWith('.attestation.json'))
  .sort()
  .map((name) => JSON.parse(readFileSync(join(VECTORS, name), 'utf8')) as AttestationVector);

/** The options that name a vector's client data: its challenge text, or the hash itself for `raw` vectors. */
function clientDataOptions(vector: AttestationVector): string[] {
  if (vector.clientDataHashDerivation === 'raw') return ['--client-data-hash', vector.clientDataHash];
  const bytes = Buffer.from(vector.challenge.value, vector.challenge.encoding);
  return ['--challenge', bytes.toString('utf8')];
}

function verifyOptions(vector: AttestationVector, at: string): string[] {
  return [
    'attest:verify',
    '--attestation',
    vector.attestationObject,
    '--key-id',
    vector.keyId,
    ...clientDataOptions(vector),
    '--team-id',
    vector.teamId,
    '--bundle-id',
    vector.bundleId,
    '--at',
    at,
  ];
}

/** notAfter of the credential (leaf) certificate, read straight from the attestation's x5c. */
function leafNotAfter(vector: AttestationVector): Date {
  const decoded = new Decoder({ useRecords: false, mapsAsObjects: true }).decode(
    Buffer.from(vector.attestationObject, 'base64'),
  ) as {
    attStmt: { x5c: Uint8Array[] };
  };
  return new Date(new X509Certificate(Buffer.from(decoded.attStmt.x5c[0])).validTo);
}

/** Runs the compiled CLI; never rejects. */
function cli(args: string[], env: Record<string, string> = {}): Promise<CliRun> {
  const base = { ...process.env };
  delete base.DATABASE_URL;
  delete base.APP_ATTEST_ROOT_CA;
  delete base.JWT_PRIVATE_KEY;
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [CLI, ...args],
      { cwd: ROOT, timeout: 30_000, env: { ...base, LOG_LEVEL: 'silent', ...env } },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

/** The one JSON object a command printed on stdout. */
function printed(run: CliRun): Record<string, unknown> {
  const lines = run.stdout.trim().split('\n');
  expect(lines).toHaveLength(1);
  return JSON.parse(lines[0]) as Record<string, unknown>;
}

describe('attest:verify (offline, no database)', () => {
  /** A DATA_DIR that must stay untouched: the command may not start the embedded database. */
  let dataDir: string;
  let authority: FabricatedAuthority;
  let rootPath: string;

  beforeAll(async () => {
    dataDir = join(mkdtempSync(join(tmpdir(), 'attestly-attest-cli-')), 'data');
    authority = await appAttestAuthority();
    rootPath = join(mkdtempSync(join(tmpdir(), 'attestly-attest-cli-root-')), 'root.pem');
    writeFileSync(rootPath, authority.rootPem);
  });

  const offline = (args: string[]) => cli(args, { DATA_DIR: dataDir });

  it('has the real device vectors to check', () => {
    expect(vectors.length).toBeGreaterThanOrEqual(5);
  });

  describe.each(vectors.map((vector) => [vector.id, vector] as const))('%s', (_id, vector) => {
    it(`is valid at its validAt, in the ${vector.environment} environment`, async () => {
      const run = await offline(verifyOptions(vector, vector.validAt));
      expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: '' });
      const result = printed(run);
      expect(result).toEqual({
        valid: true,
        environment: vector.environment,
        publicKey: expect.stringContaining('-----BEGIN PUBLIC KEY-----'),
      });
      if (vector.expectedPublicKeyPem)
        expect((result.publicKey as string).trim()).toBe(vector.expectedPublicKeyPem.trim());
      expect(existsSync(dataDir)).toBe(false);
    });

    it('is invalid at the certificate chain step one day after its leaf certificate expires', async () => {
      const late = new Date(leafNotAfter(vector).getTime() + DAY_MS).toISOString();
      const run = await offline(verifyOptions(vector, late));
      expect(run.code).toBe(1);
      const result = printed(run);
      expect(result).toEqual({
        valid: false,
        errors: [{ step: 'certificate_chain_invalid', message: expect.any(String) }],
      });
      expect(run.stderr).toMatch(/certificate_chain_invalid/);
    });
  });

  it('verifies a fabricated attestation against --root-ca, now by default, and names rp_id_mismatch for another bundle', async () => {
    const device = authority.createDevice();
    const teamId = 'FABRIC1234';
    const bundleId = 'com.example.fabricated';
    const challenge = 'a-server-challenge-Zm9vYmFy==';
    const attestation = await device.attest({ challenge, teamId, bundleId, environment: 'development' });
    const base = [
      'attest:verify',
      '--attestation',
      attestation,
      '--key-id',
      device.keyId,
      '--challenge',
      challenge,
      '--team-id',
      teamId,
    ];

    const valid = await offline([...base, '--bundle-id', bundleId, '--root-ca', rootPath]);
    expect(valid.code).toBe(0);
    expect(printed(valid)).toEqual({ valid: true, environment: 'development', publicKey: device.publicKeyPem });

    const wrongBundle = await offline([...base, '--bundle-id', 'com.example.other', '--root-ca', rootPath]);
    expect(wrongBundle.code).toBe(1);
    expect(printed(wrongBundle)).toEqual({
      valid: false,
      errors: [{ step: 'rp_id_mismatch', message: expect.any(String) }],
    });

    // Without --root-ca the trust anchor is Apple's root, which did not issue this chain.
    const appleRoot = await offline([...base, '--bundle-id', bundleId]);
    expect(printed(appleRoot)).toMatchObject({ valid: false, errors: [{ step: 'certificate_chain_invalid' }] });

    // --challenge is hashed as UTF-8 text, never base64-decoded first.
    const otherChallenge = await offline([
      ...base.slice(0, 5),
      '--challenge',
      'a different challenge',
      '--team-id',
      teamId,
      '--bundle-id',
      bundleId,
      '--root-ca',
      rootPath,
    ]);
    expect(printed(otherChallenge)).toMatchObject({ valid: false, errors: [{ step: 'nonce_mismatch' }] });
    expect(existsSync(dataDir)).toBe(false);
  });

  it('fails with one clear line and no JSON for missing or malformed options', async () => {
    const [vector] = vectors;
    const full = verifyOptions(vector, vector.validAt);
    const without = (name: string) => {
      const index = full.indexOf(name);
      return [...full.slice(0, index), ...full.slice(index + 2)];
    };
    const cases: [string[], RegExp][] = [
      [without('--attestation'), /--attestation is required/],
      [without('--key-id'), /--key-id is required/],
      [without('--team-id'), /--team-id is required/],
      [without('--bundle-id'), /--bundle-id is required/],
      [
        without(full.includes('--challenge') ? '--challenge' : '--client-data-hash'),
        /exactly one of --challenge TEXT or --client-data-hash B64/,
      ],
      [[...full, '--client-data-hash', vector.clientDataHash, '--challenge', 'x'], /exactly one of --challenge/],
      [[...without('--at'), '--at', 'yesterday'], /--at must be an ISO-8601 time/],
      [[...without('--attestation'), '--attestation', 'not base64!'], /--attestation must be base64/],
      [[...full, '--root-ca', join(dataDir, 'missing.pem')], /--root-ca: cannot read/],
    ];
    const runs = await Promise.all(cases.map(([args]) => offline(args)));
    for (const [index, run] of runs.entries()) {
      const [, message] = cases[index];
      expect(run.code).not.toBe(0);
      expect(run.stdout).toBe('');
      expect(run.stderr).toMatch(/^attest:verify: /);
      expect(run.stderr).toMatch(message);
      expect(run.stderr.trim().split('\n')).toHaveLength(1);
    }
  });
});

describe('jwks and jwt:rotate', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  const withDatabase = (...args: string[]) => cli(args, { DATABASE_URL: t.config.databaseUrl });

  it('prints the JWKS the server publishes; after jwt:rotate both keys, the new one first', async () => {
    const before = await withDatabase('jwks');
    expect({ code: before.code, stderr: before.stderr }).toEqual({ code: 0, stderr: '' });
    const jwks = printed(before) as {
      keys: { kid: string; kty: string; alg: string; use: string; n: string; e: string }[];
    };
    expect(jwks.keys).toHaveLength(1);
    expect(jwks.keys[0]).toMatchObject({
      kty: 'RSA',
      alg: 'RS256',
      use: 'sig',
      kid: expect.any(String),
      n: expect.any(String),
      e: 'AQAB',
    });
    expect(JSON.stringify(jwks)).not.toMatch(/"d"|PRIVATE/);
    const served = await t.http().get('/.well-known/jwks.json').expect(200);
    expect(served.body).toEqual(jwks);

    const rotated = await withDatabase('jwt:rotate');
    expect({ code: rotated.code, stderr: rotated.stderr }).toEqual({ code: 0, stderr: '' });
    const { kid, previousKid } = printed(rotated) as { kid: string; previousKid: string };
    expect(kid).toEqual(expect.any(String));
    expect(kid).not.toBe(jwks.keys[0].kid);
    expect(previousKid).toBe(jwks.keys[0].kid);

    const after = printed(await withDatabase('jwks')) as { keys: { kid: string }[] };
    expect(after.keys.map((key) => key.kid)).toEqual([kid, jwks.keys[0].kid]);
    expect((await t.http().get('/.well-known/jwks.json').expect(200)).body).toEqual(after);
    const [current] = await t.sql<{ kid: string }>(`SELECT kid FROM signing_keys WHERE is_current`);
    expect(current.kid).toBe(kid);
  });

  it('refuses jwt:rotate while JWT_PRIVATE_KEY is configured', async () => {
    const { generateKeyPairSync } = await import('node:crypto');
    const pem = generateKeyPairSync('rsa', { modulusLength: 2048 })
      .privateKey.export({ type: 'pkcs8', format: 'pem' })
      .toString();
    const run = await cli(['jwt:rotate'], { DATABASE_URL: t.config.databaseUrl, JWT_PRIVATE_KEY: pem });
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(/JWT_PRIVATE_KEY is set/);
  });
});
