/**
 * The bucketing SDKs must reproduce, so a device can predict its own rollout membership. Keyed by
 * flag as well as device so one device is not always first in or last out of every rollout:
 * bucket = (uint32_be(SHA-256(utf8(flagKey + ":" + deviceId))[0..4]) % 100000) / 1000, a number in
 * [0, 100) with 3 decimals; a rule with rolloutPercentage p includes the device when bucket < p
 * (p = 100 includes every device, even one without a device id; p = 0 includes none).
 */
export function rolloutBucket(flagKey: string, deviceId: string): number {
  return (sha256FirstWord(`${flagKey}:${deviceId}`) % 100_000) / 1000;
}

/**
 * `bucket` is called only when the percentage is strictly between 0 and 100, so callers can
 * defer hashing; it returns null when the device has no id, which keeps it out of partial
 * rollouts (there is nothing stable to bucket on).
 */
export function passesRollout(percentage: number, bucket: () => number | null): boolean {
  if (percentage >= 100) return true;
  if (!(percentage > 0)) return false;
  const value = bucket();
  return value !== null && value < percentage;
}

// SHA-256 (FIPS 180-4) of a short UTF-8 string, of which a bucket needs only the first 32 bits.
// Written out rather than asked of node:crypto: GET /flags hashes up to one string per flag and
// device, about 30 bytes each, and a call into the native hash costs about twice this whole
// computation for so little input. rollout.spec.ts checks it against node:crypto and the vectors.
const K = Int32Array.from([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98,
  0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
  0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8,
  0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
  0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819,
  0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
  0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
  0xc67178f2,
]);
const W = new Int32Array(64);
const utf8 = new TextEncoder();
let message = new Uint8Array(512);

/** The first four bytes of SHA-256(utf8(text)), read big-endian. */
export function sha256FirstWord(text: string): number {
  // Room for the longest UTF-8 form of `text` plus the padding.
  if (text.length * 3 + 72 > message.length) message = new Uint8Array(text.length * 3 + 72);
  const bytes = message;
  let length = 0;
  for (; length < text.length; length++) {
    const code = text.charCodeAt(length);
    if (code > 0x7f) break;
    bytes[length] = code;
  }
  // Anything beyond ASCII is encoded as node:crypto encodes a string (lone surrogates as U+FFFD).
  if (length < text.length) length = utf8.encodeInto(text, bytes).written;
  const total = ((length + 72) >>> 6) << 6;
  bytes[length] = 0x80;
  bytes.fill(0, length + 1, total - 4);
  const bits = length * 8;
  bytes[total - 5] = Math.floor(length / 0x20000000) & 0xff;
  bytes[total - 4] = bits >>> 24;
  bytes[total - 3] = (bits >>> 16) & 0xff;
  bytes[total - 2] = (bits >>> 8) & 0xff;
  bytes[total - 1] = bits & 0xff;

  let h0 = 0x6a09e667 | 0;
  let h1 = 0xbb67ae85 | 0;
  let h2 = 0x3c6ef372 | 0;
  let h3 = 0xa54ff53a | 0;
  let h4 = 0x510e527f | 0;
  let h5 = 0x9b05688c | 0;
  let h6 = 0x1f83d9ab | 0;
  let h7 = 0x5be0cd19 | 0;
  for (let block = 0; block < total; block += 64) {
    for (let i = 0; i < 16; i++) {
      const at = block + i * 4;
      W[i] = (bytes[at] << 24) | (bytes[at + 1] << 16) | (bytes[at + 2] << 8) | bytes[at + 3];
    }
    for (let i = 16; i < 64; i++) {
      const x = W[i - 15];
      const y = W[i - 2];
      const s0 = ((x >>> 7) | (x << 25)) ^ ((x >>> 18) | (x << 14)) ^ (x >>> 3);
      const s1 = ((y >>> 17) | (y << 15)) ^ ((y >>> 19) | (y << 13)) ^ (y >>> 10);
      W[i] = (W[i - 16] + s0 + W[i - 7] + s1) | 0;
    }
    let a = h0;
    let b = h1;
    let c = h2;
    let d = h3;
    let e = h4;
    let f = h5;
    let g = h6;
    let h = h7;
    for (let i = 0; i < 64; i++) {
      const S1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7));
      const t1 = (h + S1 + ((e & f) ^ (~e & g)) + K[i] + W[i]) | 0;
      const S0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10));
      const t2 = (S0 + ((a & b) ^ (a & c) ^ (b & c))) | 0;
      h = g;
      g = f;
      f = e;
      e = (d + t1) | 0;
      d = c;
      c = b;
      b = a;
      a = (t1 + t2) | 0;
    }
    h0 = (h0 + a) | 0;
    h1 = (h1 + b) | 0;
    h2 = (h2 + c) | 0;
    h3 = (h3 + d) | 0;
    h4 = (h4 + e) | 0;
    h5 = (h5 + f) | 0;
    h6 = (h6 + g) | 0;
    h7 = (h7 + h) | 0;
  }
  return h0 >>> 0;
}
