import { sign, type KeyObject } from 'node:crypto';

/**
 * Signs a JWT with RS256 on libuv's thread pool: `crypto.sign` with a callback hands the RSA
 * private-key operation to a pool thread, where `@nestjs/jwt` (jsonwebtoken, even through
 * `signAsync`) computes it on the event loop. The bytes are those jsonwebtoken writes for the same
 * input: header `{"alg":"RS256","typ":"JWT","kid":…}`, the payload serialised in its key order,
 * both base64url without padding, and an RSASSA-PKCS1-v1_5 SHA-256 signature (deterministic).
 */
export function signRs256Jwt(kid: string, payload: Record<string, unknown>, privateKey: KeyObject): Promise<string> {
  // jsonwebtoken's checks, kept so a configured JWT_PRIVATE_KEY is refused as before: a private
  // RSA key (not RSA-PSS, whose signatures an RS256 verifier refuses) of at least 2048 bits.
  if (privateKey.type !== 'private' || privateKey.asymmetricKeyType !== 'rsa') {
    return Promise.reject(new Error('RS256 needs an RSA private key'));
  }
  if ((privateKey.asymmetricKeyDetails?.modulusLength ?? 0) < 2048) {
    return Promise.reject(new Error('RS256 needs an RSA private key of at least 2048 bits'));
  }
  // Numeric dates, as jsonwebtoken required: an invalid Date would otherwise serialise as null.
  for (const claim of ['iat', 'exp', 'nbf'] as const) {
    if (claim in payload && !Number.isSafeInteger(payload[claim])) {
      return Promise.reject(new Error(`"${claim}" must be a whole number of seconds`));
    }
  }
  const signingInput = `${base64url(JSON.stringify({ alg: 'RS256', typ: 'JWT', kid }))}.${base64url(JSON.stringify(payload))}`;
  return new Promise((resolve, reject) => {
    sign('sha256', Buffer.from(signingInput), privateKey, (error, signature) => {
      if (error) reject(error);
      else resolve(`${signingInput}.${signature.toString('base64url')}`);
    });
  });
}

function base64url(text: string): string {
  return Buffer.from(text, 'utf8').toString('base64url');
}
