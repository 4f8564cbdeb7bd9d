// DATABASE_URL=… APP_ATTEST_ROOT_CA=root.pem PORT=3000 node bench/floor-attestation.mjs
// The floors of attestation: a bare NestJS application on the service's adapter
// (@nestjs/platform-express, the same Nest version, Express's JSON parser) that does only the work
// no correct refresh or validate can skip, on the bench server's own database and with the same
// fabricated devices and challenges as the refresh and validate scenarios (bench/scenarios.mjs).
// What the service costs beyond these routes is its own; bench/run.mjs loads each right after the
// service's route, with the same requests, and prints the ratio.
//
// POST /api/v1/attestation/refresh (refresh floor):
//   parse the body and the CBOR assertion, check rpIdHash; one read of the device's public key and
//   counter (its app found by the identity headers in the same statement); the P-256 signature
//   verified on libuv's thread pool; one durable statement (synchronous_commit on) that consumes
//   the challenge and advances the counter; the RS256 token signed on the thread pool meanwhile;
//   answer.
// POST /api/v1/attestation/validate (validate floor):
//   parse the body and the CBOR attestation object; the leaf certificate verified against the
//   intermediate on the thread pool (the intermediate against the trusted root once, by its bytes:
//   every device of a period shows the same one); the nonce, key id, rpIdHash, counter, aaguid
//   and credential id checked; one durable statement that consumes the challenge and inserts the
//   device; the RS256 token signed on the thread pool; answer.
// Its statements are named prepared ones (parsed and planned once per connection). No middleware,
// guards, interceptors, filters, pipes, logs, metrics, risk scoring or events.
import 'reflect-metadata';
import { Buffer } from 'node:buffer';
import { X509Certificate, createHash, createPublicKey, generateKeyPairSync, sign, verify } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Body, Controller, Get, Headers, HttpCode, HttpException, Module, Post } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Decoder } from 'cbor-x';
import pg from 'pg';

const root = new URL('..', import.meta.url).pathname;
// The service's own readers of the credential certificate (DER), so the floor parses what it parses.
const { readCertificateNonce, credentialPublicKey, spkiPem } = await import(
  join(root, 'dist/src/attestation/app-attest/credential-certificate.js')
);

const cbor = new Decoder({ useRecords: false, mapsAsObjects: true });
const sha256 = (...parts) => {
  const hash = createHash('sha256');
  for (const part of parts) hash.update(part);
  return hash.digest();
};
const refuse = (status, message) => new HttpException({ message }, status);
const AAGUID_PRODUCTION = Buffer.concat([Buffer.from('appattest'), Buffer.alloc(7)]);
const AAGUID_DEVELOPMENT = Buffer.from('appattestdevelop');

// A pool as large as the service's default, every session committing durably. Each statement is a
// named prepared one, parsed and planned once per connection, as the service's hot statements are.
const db = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10, options: '-c synchronous_commit=on' });
const rootCertificate = new X509Certificate(readFileSync(process.env.APP_ATTEST_ROOT_CA));
const tokenKey = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
const TOKEN_HEADER = Buffer.from(JSON.stringify({ alg: 'RS256', typ: 'JWT', kid: 'floor' })).toString('base64url');

/** Parsed device keys by PEM, as the service keeps them. */
const deviceKeys = new Map();
function deviceKey(pem) {
  let key = deviceKeys.get(pem);
  if (!key) {
    if (deviceKeys.size >= 10_000) deviceKeys.delete(deviceKeys.keys().next().value);
    deviceKeys.set(pem, (key = createPublicKey(pem)));
  }
  return key;
}

/** Intermediates already verified against the root, by their DER bytes (base64). */
const trustedIntermediates = new Map();

function verifyOffLoop(algorithm, data, key, signature) {
  return new Promise((resolve, reject) =>
    verify(algorithm, data, key, signature, (error, valid) => (error ? reject(error) : resolve(valid))),
  );
}

function signToken(claims) {
  const input = `${TOKEN_HEADER}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}`;
  return new Promise((resolve, reject) =>
    sign('sha256', Buffer.from(input), tokenKey, (error, signature) =>
      error ? reject(error) : resolve(`${input}.${signature.toString('base64url')}`),
    ),
  );
}

function tokenClaims(keyId, appId, organizationId, bundleId) {
  const now = Math.floor(Date.now() / 1000);
  return {
    sub: keyId,
    app_id: appId,
    org_id: organizationId,
    bundle_id: bundleId,
    env: 'production',
    risk_score: 0,
    iat: now,
    exp: now + 3600,
    iss: 'http://127.0.0.1',
    aud: 'attestly-device',
  };
}

/** A DER element at `offset`: its full bytes and where its content starts and ends. */
function derElement(bytes, offset) {
  let length = bytes[offset + 1];
  let start = offset + 2;
  if (length & 0x80) {
    const count = length & 0x7f;
    length = 0;
    for (let i = 0; i < count; i++) length = length * 256 + bytes[start + i];
    start += count;
  }
  return { start, end: start + length, whole: bytes.subarray(offset, start + length) };
}

/** tbsCertificate, signature algorithm's hash and signature of a DER certificate. */
function signedParts(der) {
  const certificate = derElement(der, 0);
  const tbs = derElement(der, certificate.start);
  const algorithm = derElement(der, tbs.end);
  const signature = derElement(der, algorithm.end);
  // ecdsa-with-SHA384 ends in 04 03 03; ecdsa-with-SHA256 in 04 03 02.
  const hash = der[algorithm.end - 1] === 3 ? 'sha384' : 'sha256';
  return { tbs: tbs.whole, hash, signature: der.subarray(signature.start + 1, signature.end) };
}

async function issuedBy(subjectDer, issuerKey) {
  const { tbs, hash, signature } = signedParts(subjectDer);
  return verifyOffLoop(hash, tbs, issuerKey, signature);
}

async function trustIntermediate(der) {
  const id = der.toString('base64');
  let trusted = trustedIntermediates.get(id);
  if (!trusted) {
    const certificate = new X509Certificate(der);
    if (!certificate.ca || !(await issuedBy(der, rootCertificate.publicKey))) {
      throw refuse(401, 'the chain does not lead to the root');
    }
    trusted = { publicKey: certificate.publicKey, notAfter: new Date(certificate.validTo) };
    trustedIntermediates.set(id, trusted);
  }
  if (trusted.notAfter < new Date()) throw refuse(401, 'the intermediate expired');
  return trusted.publicKey;
}

function text(value, name) {
  if (typeof value !== 'string' || value === '' || value.length > 20_000) throw refuse(400, `${name} is required`);
  return value;
}

class FloorController {
  health() {
    return { status: 'healthy' };
  }

  async refresh(body, bundleId, teamId) {
    const keyId = text(body?.keyId, 'keyId');
    const challenge = text(body?.challenge, 'challenge');
    const assertion = cbor.decode(Buffer.from(text(body?.assertion, 'assertion'), 'base64'));
    const { signature, authenticatorData } = assertion ?? {};
    if (
      !(signature instanceof Uint8Array) ||
      !(authenticatorData instanceof Uint8Array) ||
      authenticatorData.length < 37
    ) {
      throw refuse(401, 'invalid assertion');
    }
    const authData = Buffer.from(authenticatorData);
    if (!authData.subarray(0, 32).equals(sha256(Buffer.from(`${teamId}.${bundleId}`)))) {
      throw refuse(401, 'rpIdHash mismatch');
    }
    const counter = authData.readUInt32BE(33);
    const { rows } = await db.query({
      name: 'floor_read_key',
      text: `SELECT d.id, d.public_key_pem, d.sign_counter, a.id AS app_id, a.organization_id
               FROM apps a JOIN devices d ON d.app_id = a.id
              WHERE a.bundle_id = $1 AND a.team_id = $2 AND d.key_id = $3`,
      values: [bundleId, teamId, keyId],
    });
    const device = rows[0];
    if (!device) throw refuse(401, 'unknown key');
    if (counter <= Number(device.sign_counter)) throw refuse(401, 'counter not increasing');
    const nonce = sha256(authData, sha256(Buffer.from(challenge, 'utf8')));
    if (!(await verifyOffLoop('sha256', nonce, deviceKey(device.public_key_pem), Buffer.from(signature)))) {
      throw refuse(401, 'signature invalid');
    }
    const [advanced, token] = await Promise.all([
      db.query({
        name: 'floor_refresh',
        text: `WITH consumed AS (
                 DELETE FROM attestation_challenges WHERE challenge_hash = $1 AND app_id = $2 AND expires_at > now() RETURNING 1)
               UPDATE devices SET sign_counter = $3, last_seen_at = now()
                WHERE id = $4 AND sign_counter < $3 AND EXISTS (SELECT 1 FROM consumed) RETURNING 1`,
        values: [sha256(Buffer.from(challenge)).toString('hex'), device.app_id, counter, device.id],
      }),
      signToken(tokenClaims(keyId, device.app_id, device.organization_id, bundleId)),
    ]);
    if (advanced.rowCount !== 1) throw refuse(401, 'challenge invalid or counter raced');
    return { token, expiresIn: 3600 };
  }

  async validate(body, bundleId, teamId) {
    const keyId = text(body?.keyId, 'keyId');
    const challenge = text(body?.challenge, 'challenge');
    const object = cbor.decode(Buffer.from(text(body?.attestationObject, 'attestationObject'), 'base64'));
    const x5c = object?.attStmt?.x5c;
    if (
      object?.fmt !== 'apple-appattest' ||
      !Array.isArray(x5c) ||
      x5c.length !== 2 ||
      !(object.authData instanceof Uint8Array)
    ) {
      throw refuse(401, 'invalid attestation object');
    }
    const authData = Buffer.from(object.authData);
    const leafDer = Buffer.from(x5c[0]);
    const leaf = new X509Certificate(leafDer);
    const now = new Date();
    if (new Date(leaf.validFrom) > now || new Date(leaf.validTo) < now) throw refuse(401, 'leaf not valid now');
    const intermediateKey = await trustIntermediate(Buffer.from(x5c[1]));
    if (!(await issuedBy(leafDer, intermediateKey))) throw refuse(401, 'leaf not signed by the intermediate');
    const clientDataHash = sha256(Buffer.from(challenge, 'utf8'));
    if (!readCertificateNonce(leaf).equals(sha256(authData, clientDataHash))) throw refuse(401, 'nonce mismatch');
    const credentialKey = credentialPublicKey(leaf);
    const keyIdBytes = sha256(credentialKey.point);
    if (keyIdBytes.toString('base64') !== keyId) throw refuse(401, 'key id mismatch');
    if (!authData.subarray(0, 32).equals(sha256(Buffer.from(`${teamId}.${bundleId}`)))) {
      throw refuse(401, 'rpIdHash mismatch');
    }
    if (authData.length < 55 || authData.readUInt32BE(33) !== 0) throw refuse(401, 'counter not zero');
    const aaguid = authData.subarray(37, 53);
    const environment = aaguid.equals(AAGUID_PRODUCTION)
      ? 'production'
      : aaguid.equals(AAGUID_DEVELOPMENT)
        ? 'development'
        : null;
    if (!environment) throw refuse(401, 'aaguid invalid');
    const credentialLength = authData.readUInt16BE(53);
    if (!authData.subarray(55, 55 + credentialLength).equals(keyIdBytes)) throw refuse(401, 'credential id mismatch');
    const publicKeyPem = spkiPem(credentialKey.spki);
    const { rows } = await db.query({
      name: 'floor_validate',
      text: `WITH app AS (SELECT id, organization_id FROM apps WHERE bundle_id = $1 AND team_id = $2),
                  consumed AS (
                    DELETE FROM attestation_challenges
                     WHERE challenge_hash = $3 AND app_id = (SELECT id FROM app) AND expires_at > now() RETURNING 1)
             INSERT INTO devices (organization_id, app_id, key_id, public_key_pem, environment, attestation_count)
             SELECT organization_id, id, $4, $5, $6, 1 FROM app WHERE EXISTS (SELECT 1 FROM consumed)
             RETURNING app_id, organization_id`,
      values: [bundleId, teamId, sha256(Buffer.from(challenge)).toString('hex'), keyId, publicKeyPem, environment],
    });
    if (!rows[0]) throw refuse(401, 'challenge invalid');
    const token = await signToken(tokenClaims(keyId, rows[0].app_id, rows[0].organization_id, bundleId));
    return { token, expiresIn: 3600 };
  }
}

const method = (name, decorators) =>
  Reflect.decorate(
    decorators,
    FloorController.prototype,
    name,
    Object.getOwnPropertyDescriptor(FloorController.prototype, name),
  );
method('health', [Get('health')]);
for (const name of ['refresh', 'validate']) {
  method(name, [Post(`api/v1/attestation/${name}`), HttpCode(200)]);
  // Parameter decorators: the body and the two identity headers.
  Body()(FloorController.prototype, name, 0);
  Headers('x-bundle-id')(FloorController.prototype, name, 1);
  Headers('x-team-id')(FloorController.prototype, name, 2);
}
const Controllers = Reflect.decorate([Controller()], FloorController);

class FloorModule {}
const AppModule = Reflect.decorate([Module({ controllers: [Controllers] })], FloorModule);

const app = await NestFactory.create(AppModule, { logger: false });
app.disable('x-powered-by');
app.set('etag', false);
app.enableShutdownHooks();
await app.listen(Number(process.env.PORT ?? 3000), process.env.HOST ?? '127.0.0.1');
