import { Injectable } from '@nestjs/common';
import { SignJWT, generateKeyPair, jwtVerify, type CryptoKey } from 'jose';

/**
 * A full RS256 sign-and-verify cycle for the readiness probe. It proves the runtime's crypto
 * works; the attestation module replaces it with a probe over the real signing key.
 */
@Injectable()
export class TokenSigningProbe {
  private keys: Promise<{ publicKey: CryptoKey; privateKey: CryptoKey }> | null = null;

  async signAndVerify(): Promise<void> {
    this.keys ??= generateKeyPair('RS256');
    const { publicKey, privateKey } = await this.keys;
    const token = await new SignJWT({ probe: true })
      .setProtectedHeader({ alg: 'RS256' })
      .setIssuedAt()
      .sign(privateKey);
    await jwtVerify(token, publicKey, { algorithms: ['RS256'] });
  }
}
