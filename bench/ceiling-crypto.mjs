// The crypto-only ceiling of attestation: how many (ECDSA P-256 verify + RS256 sign) pairs per
// second this machine computes using every core, one worker thread per core, for a fixed time.
// That pair is the cryptography of one refresh (the assertion's signature, then the device token),
// so no refresh rate can exceed it; validate does the same and more (the certificate chain).
import { Buffer } from 'node:buffer';
import { createHash, generateKeyPairSync, sign, verify } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';

/** Runs `threads` workers (one per core by default) for `seconds` and sums their rates. */
export async function measureCryptoCeiling(seconds, threads = availableParallelism()) {
  const workers = Array.from(
    { length: threads },
    () => new Worker(new URL(import.meta.url), { workerData: { seconds } }),
  );
  const ready = workers.map((worker) => nextMessage(worker));
  await Promise.all(ready);
  // Keys are made first in every worker, so all of them run the loop over the same window.
  for (const worker of workers) worker.postMessage('go');
  const results = await Promise.all(workers.map((worker) => nextMessage(worker)));
  await Promise.all(workers.map((worker) => worker.terminate()));
  const sum = (key) => results.reduce((total, result) => total + result[key], 0);
  const pairs = sum('pairs');
  const elapsed = Math.max(...results.map((result) => result.seconds));
  return {
    threads,
    seconds: Math.round(elapsed * 10) / 10,
    pairsPerSecond: Math.round(pairs / elapsed),
    // Per operation, as measured on one core inside the loop.
    verifyMs: Math.round((sum('verifyMs') / pairs) * 1000) / 1000,
    signMs: Math.round((sum('signMs') / pairs) * 1000) / 1000,
  };
}

function nextMessage(worker) {
  return new Promise((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
  });
}

function work({ seconds }) {
  // What a refresh verifies: an ECDSA P-256 signature (DER, as App Attest sends it) over a
  // SHA-256 nonce; what it signs: an RS256 JWT of a realistic size with a 2048-bit key.
  const device = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const nonce = createHash('sha256').update('authenticator data and client data hash').digest();
  const signature = sign('sha256', nonce, device.privateKey);
  const tokenKey = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
  const signingInput = Buffer.from(
    `${Buffer.from(JSON.stringify({ alg: 'RS256', typ: 'JWT', kid: 'k'.repeat(22) })).toString('base64url')}.${Buffer.from(
      JSON.stringify({
        sub: 'x'.repeat(44),
        app_id: '00000000-0000-4000-8000-000000000000',
        org_id: '00000000-0000-4000-8000-000000000000',
        bundle_id: 'com.bench.app0',
        environment: 'production',
        risk_score: 0,
        iat: 1_700_000_000,
        exp: 1_700_003_600,
        iss: 'http://127.0.0.1',
        aud: 'attestly-device',
      }),
    ).toString('base64url')}`,
  );
  parentPort.postMessage('ready');
  parentPort.once('message', () => {
    let pairs = 0;
    let verifyMs = 0;
    let signMs = 0;
    const started = performance.now();
    const deadline = started + seconds * 1000;
    for (let now = started; now < deadline; pairs++) {
      if (!verify('sha256', nonce, device.publicKey, signature)) throw new Error('the ECDSA signature did not verify');
      const verified = performance.now();
      sign('sha256', signingInput, tokenKey);
      const signed = performance.now();
      verifyMs += verified - now;
      signMs += signed - verified;
      now = signed;
    }
    parentPort.postMessage({ pairs, verifyMs, signMs, seconds: (performance.now() - started) / 1000 });
  });
}

if (!isMainThread) work(workerData);
